/* A device runs subgraphs. The CPU device is registered from the generated registry;
 * plugin devices are registered through the plugin ABI (api/cvml_plugin.h). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

typedef struct cvml_device cvml_device;

typedef struct device_run_options {
    int32_t threads;
} device_run_options;

struct cvml_device {
    const char* name;
    const char* version;
    /* 1 when the device can run this node (operator, attributes, shapes, precisions). */
    int (*supports)(cvml_device* dev, const ir_graph* g, const ir_node* node);
    /* Plans memory and prepares constants for a subgraph; sets sg->device_state. */
    int (*prerun)(cvml_device* dev, ir_graph* g, ir_subgraph* sg, const device_run_options* opt);
    /* Runs the subgraph: its input tensors' host data is valid on entry, its output
     * tensors' host data must be valid on return. */
    int (*run)(cvml_device* dev, ir_graph* g, ir_subgraph* sg);
    /* Frees sg->device_state. */
    void (*postrun)(cvml_device* dev, ir_graph* g, ir_subgraph* sg);
    /* Called when the device is unregistered. */
    void (*release)(cvml_device* dev);
    void* priv;
};

int device_registry_add(cvml_device* dev);
int device_registry_remove(cvml_device* dev);
cvml_device* device_registry_find(const char* name);
int32_t device_registry_count(void);
cvml_device* device_registry_at(int32_t index);
int32_t device_registry_index(const cvml_device* dev);
