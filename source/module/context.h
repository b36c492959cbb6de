/* The context behind cvml_context: devices in priority order and the thread count. */
#pragma once

#include "module/device.h"

#define CVML_CONTEXT_MAX_DEVICES 16

struct cvml_context {
    int32_t threads;
    /* Names chosen with cvml_context_set_devices(), in priority order; when none were
     * chosen, every registered device is used, plugin devices before the CPU. */
    char device_names[CVML_CONTEXT_MAX_DEVICES][32];
    int32_t device_name_count;
};

/* Resolves the context's device list against the registry, "cpu" last. */
int context_devices(const cvml_context* ctx, cvml_device** out, int32_t cap, int32_t* count);
