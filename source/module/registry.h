/* The generated registration table (cmake/registry.cmake writes registry_gen.cpp). */
#pragma once

typedef struct registry_entry {
    const char* kind; /* "operator", "serializer", "device", "cpu kernel" */
    const char* name; /* the source file's name */
    int (*do_register)(void);
    int (*do_unregister)(void);
} registry_entry;

extern const registry_entry cvml_generated_registry[];
extern const int cvml_generated_registry_count;
/* The operators a CVML_OPERATORS build left out, NULL-terminated (empty in a full build). */
extern const char* const cvml_left_out_operators[];
extern const int cvml_left_out_operator_count;

/* The error for a model naming an operator that is not registered: upstream's
 * "Operator NAME is not registered" (CVML_ERR_RUNTIME), which says so when this build
 * left the operator out (CVML_OPERATORS) rather than it not existing. */
int registry_operator_missing(const char* name);

/* Runs every register function in table order. On a failure, unregisters what was
 * registered (in reverse) and returns the failure with a message naming the entry. */
int registry_register_all(void);
/* Unregisters everything in reverse order. */
void registry_unregister_all(void);
