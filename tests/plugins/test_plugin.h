/* The test plugin's counters, reachable by tests through its device's `priv`. */
#pragma once

#include <stdint.h>

typedef struct test_plugin_stats {
    int64_t nodes_run;     /* operator nodes run, all subgraphs together */
    int64_t relu_run;      /* of which relu */
    int64_t subgraphs_run; /* run() calls */
    int64_t copies_in;     /* copy_to_device calls */
    int64_t copies_out;    /* copy_to_host calls */
    int64_t bytes_in;
    int64_t bytes_out;
    int64_t live_buffers; /* mem_alloc minus mem_free */
    int64_t preruns;
    int64_t postruns;
} test_plugin_stats;
