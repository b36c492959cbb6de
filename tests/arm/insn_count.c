/* A qemu TCG plugin counting the guest instructions a user-mode run executes:
 *   qemu-aarch64 -plugin tests/arm/libinsn_count.so,out=FILE PROGRAM...
 * writes the count to FILE at exit (stderr without out=). Debian's qemu-user has plugin
 * support but ships neither its example plugins (libinsn.so) nor the plugin header, so
 * the few entry points used are declared here from qemu's documented plugin API
 * (version 1, qemu 7.2): each translated block gets an inline add of its instruction
 * count, run every time the block executes. Single-threaded guests only (the inline
 * add is not atomic): scripts/test_arm.sh runs with CVML_NUM_THREADS=1. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void* userdata);

/* Provided by qemu. */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op,
                                              void* ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void* userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

static uint64_t executed;
static char out_path[4096];

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed,
                                             qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void* userdata) {
    (void)id;
    (void)userdata;
    FILE* f = out_path[0] ? fopen(out_path, "w") : NULL;
    fprintf(f ? f : stderr, "%" PRIu64 "\n", executed);
    if (f) fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t* info, int argc,
                               char** argv) {
    (void)info;
    for (int i = 0; i < argc; ++i)
        if (strncmp(argv[i], "out=", 4) == 0)
            snprintf(out_path, sizeof(out_path), "%s", argv[i] + 4);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, NULL);
    return 0;
}
