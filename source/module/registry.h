/* The generated registration table of what registers at run time, serializers and
 * devices (plugins add devices): cmake/registry.cmake writes registry_gen.cpp.
 * Operators and CPU kernels are const tables instead (op_def.h, cpu_kernel.h). */
#pragma once

typedef struct registry_entry {
    const char* kind; /* "serializer", "device" */
    const char* name; /* the source file's name */
    int (*do_register)(void);
    int (*do_unregister)(void);
} registry_entry;

extern const registry_entry cvml_generated_registry[];
extern const int cvml_generated_registry_count;
/* Runs every register function in table order. On a failure, unregisters what was
 * registered (in reverse) and returns the failure with a message naming the entry. */
int registry_register_all(void);
/* Unregisters everything in reverse order. */
void registry_unregister_all(void);
