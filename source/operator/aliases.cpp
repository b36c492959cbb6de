/* Upstream's operator aliases. Upstream's registry resolves these names (add_alias in
 * src/top/ files), so shape, precision and gas inference work on them and
 * CVMAPIGetGasFromGraphFile succeeds, but its runtime looks kernels up by the name as
 * written ("cvm.runtime.cpu.add") and finds none: loading fails with a logic error
 * ("function undefined"). Here an alias is a copy of its target's definition under
 * the alias name with `runnable` cleared, so no device claims it.
 *
 * Names such as "__add_symbol__" are reachable only through a func_name that still
 * ends in them after the "_<digits>"/"_" strip (for example "__add_symbol___"); the
 * plain spelling strips to "__add_symbol_", which is not registered (runtime error),
 * exactly as upstream.
 *
 * The targets are reached through accessors exported by their operator files, not
 * through the registry, because the generated registry registers files in sorted
 * order and this file comes first. */
#include "operator/op_def.h"

const op_def* op_def_broadcast_add(void);
const op_def* op_def_broadcast_sub(void);
const op_def* op_def_broadcast_mul(void);
const op_def* op_def_broadcast_div(void);
const op_def* op_def_broadcast_max(void);
const op_def* op_def_broadcast_greater(void);
const op_def* op_def_relu(void);
const op_def* op_def_non_max_suppression(void);

namespace {

struct alias_entry {
    const char* alias;
    const op_def* (*target)(void);
};

const alias_entry kAliases[] = {
    {"__add_symbol__", op_def_broadcast_add},
    {"add", op_def_broadcast_add},
    {"__sub_symbol__", op_def_broadcast_sub},
    {"subtract", op_def_broadcast_sub},
    {"__mul_symbol__", op_def_broadcast_mul},
    {"multiply", op_def_broadcast_mul},
    {"__div_symbol__", op_def_broadcast_div},
    {"__max_symbol__", op_def_broadcast_max},
    {"__greater_symbol__", op_def_broadcast_greater},
    {"nn.relu", op_def_relu},
    {"vision.non_max_suppression", op_def_non_max_suppression},
};
constexpr int kAliasCount = static_cast<int>(sizeof kAliases / sizeof kAliases[0]);

/* Plain zero-initialised storage (no constructors); filled at registration. */
op_def g_alias_defs[kAliasCount];
bool g_registered[kAliasCount];

}  // namespace

int register_op_aliases(void) {
    for (int i = 0; i < kAliasCount; ++i) {
        const op_def* target = kAliases[i].target ? kAliases[i].target() : nullptr;
        if (!target) continue;
        g_alias_defs[i] = *target;
        g_alias_defs[i].name = kAliases[i].alias;
        g_alias_defs[i].runnable = 0;
        // Upstream's storage-reuse whitelist is a list of names; no alias is on it.
        g_alias_defs[i].may_share_input_storage = 0;
        int rc = op_registry_add(&g_alias_defs[i]);
        if (rc) return rc;
        g_registered[i] = true;
    }
    return CVML_OK;
}

int unregister_op_aliases(void) {
    int result = CVML_OK;
    for (int i = 0; i < kAliasCount; ++i) {
        if (!g_registered[i]) continue;
        int rc = op_registry_remove(&g_alias_defs[i]);
        if (rc) result = rc;
        g_registered[i] = false;
    }
    return result;
}
