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
 * The aliases are a registry group of their own (operator/alias/, registered after
 * the operators), so the targets are found in the operator registry. A build that
 * leaves a target out (CVML_OPERATORS) leaves its aliases out too. */
#include "operator/op_def.h"

namespace {

struct alias_entry {
    const char* alias;
    const char* target;
};

const alias_entry kAliases[] = {
    {"__add_symbol__", "broadcast_add"},
    {"add", "broadcast_add"},
    {"__sub_symbol__", "broadcast_sub"},
    {"subtract", "broadcast_sub"},
    {"__mul_symbol__", "broadcast_mul"},
    {"multiply", "broadcast_mul"},
    {"__div_symbol__", "broadcast_div"},
    {"__max_symbol__", "broadcast_max"},
    {"__greater_symbol__", "broadcast_greater"},
    {"nn.relu", "relu"},
    {"vision.non_max_suppression", "non_max_suppression"},
};
constexpr int kAliasCount = static_cast<int>(sizeof kAliases / sizeof kAliases[0]);

/* Plain zero-initialised storage (no constructors); filled at registration. */
op_def g_alias_defs[kAliasCount];
bool g_registered[kAliasCount];

}  // namespace

int register_op_alias_upstream(void) {
    for (int i = 0; i < kAliasCount; ++i) {
        const op_def* target = op_registry_find(kAliases[i].target);
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

int unregister_op_alias_upstream(void) {
    int result = CVML_OK;
    for (int i = 0; i < kAliasCount; ++i) {
        if (!g_registered[i]) continue;
        int rc = op_registry_remove(&g_alias_defs[i]);
        if (rc) result = rc;
        g_registered[i] = false;
    }
    return result;
}
