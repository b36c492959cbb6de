/* A device runs subgraphs. The core's device interface is the plugin ABI's struct
 * (api/cvml_plugin.h): the CPU device is registered from the generated registry,
 * plugin devices through the host table the loader hands to a plugin's entry. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml_plugin.h"
#include "graph/graph.h"

typedef cvml_device_options device_run_options;

/* Refuses a device whose struct was compiled for another ABI (version or size). */
int device_registry_add(cvml_device* dev);
int device_registry_remove(cvml_device* dev);
cvml_device* device_registry_find(const char* name);
int32_t device_registry_count(void);
cvml_device* device_registry_at(int32_t index);
int32_t device_registry_index(const cvml_device* dev);

/* island_work_per_element, which ABI 2.1 appended: 0 (keep every island) for a device
 * built against 2.0, whose struct ends before it. */
static inline uint32_t device_island_work(const cvml_device* dev) {
    return CVML_PLUGIN_HAS(cvml_device, dev, island_work_per_element) ? dev->island_work_per_element
                                                                      : 0;
}

/* 1 when the device has its own memory (mem_alloc and the copies). */
static inline int device_has_memory(const cvml_device* dev) {
    return dev->mem_alloc != nullptr;
}
