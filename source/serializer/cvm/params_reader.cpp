/* The params blob reader (FORMAT.md §4.2) and the load-only refusals that run
 * between the graph and the params (§5 step 5, divergence D2). Every size is checked
 * against the bytes that remain before anything is allocated. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "serializer/cvm/name_index.h"
#include "graph/verify.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"
#include "utility/sort.h"

namespace {

constexpr uint64_t kListMagic = 0xF7E58D4F05049CB7ull;
constexpr uint64_t kArrayMagic = 0xDD5E40F096B4A13Full;
constexpr uint64_t kMaxStorage = uint64_t{1} << 32;

/* The blob, in memory (p) or read from a file as it is parsed (f, p NULL), so a large
 * params file is never held whole: size is known either way, and every size in it is
 * checked against what remains before anything is read or allocated. */
struct reader {
    const uint8_t* p;
    FILE* f;
    size_t size;
    size_t pos;
    bool read(void* dst, size_t n) {
        if (size - pos < n) return false;
        if (n == 0) return true;   // dst may be NULL (an empty name before any block)
        if (CVML_BARE_METAL || p)  // bare metal loads from memory only
            memcpy(dst, p + pos, n);
        else if (fread(dst, 1, n, f) != n)
            return false;  // the file shrank under us: as truncated
        pos += n;
        return true;
    }
    /* The next n bytes: in place from memory, else read into scratch; NULL when they are
     * not there. */
    const uint8_t* take(size_t n, uint8_t* scratch) {
        if (CVML_BARE_METAL || p) {
            if (size - pos < n) return nullptr;
            const uint8_t* at = p + pos;
            pos += n;
            return at;
        }
        return read(scratch, n) ? scratch : nullptr;
    }
    /* The next n bytes of a blob in memory, in place; NULL when they are not there. */
    const uint8_t* in_memory(size_t n) {
        if (size - pos < n) return nullptr;
        pos += n;
        return p + pos - n;
    }
    bool skip(size_t n) {
        if (size - pos < n) return false;
        for (size_t left = n; !CVML_BARE_METAL && !p && left > 0;) {  // fseek takes a long
            const size_t step = left < 0x40000000u ? left : 0x40000000u;
            if (fseek(f, static_cast<long>(step), SEEK_CUR) != 0) return false;
            left -= step;
        }
        pos += n;
        return true;
    }
    size_t remaining() const { return size - pos; }
};

uint64_t le64(const uint8_t* b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}

bool read_u64(reader* r, uint64_t* v) {
    uint8_t b[8];
    if (!r->read(b, 8)) return false;
    *v = le64(b);
    return true;
}

bool read_i32(reader* r, int32_t* v) {
    uint8_t b[4];
    if (!r->read(b, 4)) return false;
    *v =
        static_cast<int32_t>(static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                             static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24);
    return true;
}

struct name_ref {
    const char* p;
    size_t len;
    size_t offset;   /* in the blob, for messages */
    size_t in_block; /* where it was copied */
};

/* The variables by name: upstream's GetInputIndex searches the variables in node
 * order and takes the first of that name, which is the lowest node index among equal
 * names in the index. A sorted index keeps a params file of many names linear-log. */
int index_variables(const ir_graph* g, name_index* index) {
    name_entry* entries = static_cast<name_entry*>(
        cvml_scratch_alloc(sizeof(name_entry) * (static_cast<size_t>(g->node_count) + 1)));
    if (!entries) return cvml_fail_out_of_memory();
    int32_t count = 0;
    for (int32_t i = 0; i < g->node_count; ++i)
        if (!g->nodes[i]->op) entries[count++] = {g->nodes[i]->name, strlen(g->nodes[i]->name), i};
    name_index_init(index, entries, count);
    return CVML_OK;
}

ir_tensor* find_variable(ir_graph* g, const name_index* index, const name_ref& n) {
    int32_t node = name_index_find(index, n.p, n.len);
    return node < 0 ? nullptr : g->tensors[g->nodes[node]->outputs[0]];
}

/* Elements first .. first + n - 1 of constant t from n little-endian values of `elem`
 * bytes (1 or 4), each checked against the precision. */
int store_values(ir_tensor* t, const uint8_t* data, int64_t n, int64_t elem, int64_t first,
                 const char* name) {
    const int32_t bound = ir_precision_bound(t->precision);
    for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        if (elem == 1) {
            v = static_cast<int8_t>(data[i]);
        } else {
            const uint8_t* b = data + 4 * i;
            v = static_cast<int32_t>(
                static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24);
        }
        if (v < -bound || v > bound)
            return cvml_fail(CVML_ERR_LOGIC,
                             "params: parameter %s at index %lld value %" PRId32
                             " exceeds precision %" PRId32,
                             name, static_cast<long long>(first + i), v, t->precision);
        ir_storage_store(t->const_data, t->storage, first + i, v);
    }
    return CVML_OK;
}

/* The rest of copy_values() for a blob read from a file, a chunk at a time: the 16 KB
 * chunk is on the stack only on this path (a microcontroller loads from memory). */
__attribute__((noinline)) int copy_values_from_file(reader* r, ir_tensor* t, int64_t elem,
                                                    int64_t elems, const char* name, size_t start) {
    uint8_t chunk[16384];  // whole elements of either width
    int rc = CVML_OK;
    for (int64_t i = 0; i < elems && !rc;) {
        const int64_t n = elems - i < 16384 / elem ? elems - i : 16384 / elem;
        const uint8_t* data = r->take(static_cast<size_t>(n * elem), chunk);
        if (!data)
            return cvml_fail(CVML_ERR_RUNTIME,
                             "params: array '%s' at byte %" CVML_PRIuSIZE ": cannot read it", name,
                             start);
        rc = store_values(t, data, n, elem, i, name);
        i += n;
    }
    return rc;
}

/* Elements of constant t copied into storage of its own: no int32 copy of a large
 * array at load; a value out of range fails the whole load, so a partly filled
 * constant is never used. */
int copy_values(reader* r, ir_tensor* t, int bits, int64_t elems, const char* name, size_t start) {
    int rc = ir_const_alloc(t);
    if (rc) return rc;
    const int64_t elem = bits / 8;
    if (CVML_BARE_METAL || r->p) {
        const uint8_t* data = r->in_memory(static_cast<size_t>(elems * elem));
        rc = data ? store_values(t, data, elems, elem, 0, name)
                  : cvml_fail(CVML_ERR_RUNTIME,
                              "params: array '%s' at byte %" CVML_PRIuSIZE ": cannot read it", name,
                              start);
    } else {
        rc = copy_values_from_file(r, t, elem, elems, name, start);
    }
    if (!rc) t->file_bits = static_cast<uint8_t>(bits);
    return rc;
}

/* Whether the host reads a little-endian int32 the way the blob stores it. */
bool host_is_little_endian() {
    const uint32_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The caller's buffer outlives the graph: the constant keeps pointing into it when
 * its values can be read there as they are (int8 with the 64 bytes past the end that
 * int8 arrays carry, or aligned little-endian int32); otherwise it is copied. The
 * values are checked against the precision either way. */
int borrow_or_copy(reader* r, ir_tensor* t, int bits, int64_t elems, const char* name,
                   size_t start) {
    const uint8_t* at = r->p + r->pos;
    const size_t bytes = static_cast<size_t>(elems) * static_cast<size_t>(bits / 8);
    const bool fits = bits == 8
                          ? r->remaining() - bytes >= 64
                          : reinterpret_cast<uintptr_t>(at) % 4 == 0 && host_is_little_endian();
    if (!fits) return copy_values(r, t, bits, elems, name, start);
    const int32_t bound = ir_precision_bound(t->precision);
    for (int64_t i = 0; i < elems; ++i) {
        int32_t v;
        if (bits == 8) {
            v = static_cast<int8_t>(at[i]);
        } else {
            memcpy(&v, at + 4 * i, 4);
        }
        if (v < -bound || v > bound)
            return cvml_fail(CVML_ERR_LOGIC,
                             "params: parameter %s at index %lld value %" PRId32
                             " exceeds precision %" PRId32,
                             name, static_cast<long long>(i), v, t->precision);
    }
    // int32 values of a precision of at most 8 stay int32 wide: storage is per tensor.
    ir_const_borrow(t, at, bits == 8 ? STORAGE_INT8 : STORAGE_INT32);
    r->pos += bytes;
    t->file_bits = static_cast<uint8_t>(bits);
    return CVML_OK;
}

int read_array(reader* r, ir_graph* g, ir_tensor* t, const char* name, bool last) {
    size_t start = r->pos;
    uint64_t magic, reserved;
    int32_t dev_type, dev_id, ndim;
    uint8_t dtype[4];
    if (!read_u64(r, &magic) || !read_u64(r, &reserved))
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE ": truncated header", name,
                         start);
    if (magic != kArrayMagic)
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE ": bad magic 0x%016llx", name,
                         start, static_cast<unsigned long long>(magic));
    if (!read_i32(r, &dev_type) || !read_i32(r, &dev_id) || !read_i32(r, &ndim) ||
        !r->read(dtype, 4))
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE ": truncated header", name,
                         start);
    if (ndim < 0 || static_cast<uint64_t>(ndim) * 8 > r->remaining())
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE ": ndim %" PRId32
                         " exceeds the blob",
                         name, start, ndim);
    int64_t shape[64];
    int64_t elems = 1;
    bool overflow = false;
    for (int32_t i = 0; i < ndim; ++i) {
        uint64_t v = 0;
        read_u64(r, &v);
        int64_t d = static_cast<int64_t>(v);
        if (i < 64) shape[i] = d;
        if (d < 0 || (d > 0 && elems > INT64_MAX / 32 / d))
            overflow = true;
        else
            elems *= d;
    }
    uint64_t byte_size;
    if (!read_u64(r, &byte_size))
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE ": truncated header", name,
                         start);
    uint8_t code = dtype[0], bits = dtype[1];
    uint16_t lanes = static_cast<uint16_t>(dtype[2] | dtype[3] << 8);
    int64_t elem_bytes = (bits + 7) / 8;
    if (overflow || byte_size != static_cast<uint64_t>(elems * elem_bytes))
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE
                         ": data_byte_size %llu does not match its "
                         "shape and type",
                         name, start, static_cast<unsigned long long>(byte_size));
    if (byte_size > r->remaining()) {
        if (last)
            // D3: upstream accepts a short last tensor and leaves the rest of it
            // uninitialised; the result would be undefined, so it is refused.
            return cvml_fail(CVML_ERR_LOGIC,
                             "params: array '%s' at byte %" CVML_PRIuSIZE
                             ": %llu data bytes but only %" CVML_PRIuSIZE " remain",
                             name, start, static_cast<unsigned long long>(byte_size),
                             r->remaining());
        return cvml_fail(CVML_ERR_RUNTIME,
                         "params: array '%s' at byte %" CVML_PRIuSIZE
                         ": %llu data bytes but only %" CVML_PRIuSIZE
                         " remain "
                         "(the next array is missing)",
                         name, start, static_cast<unsigned long long>(byte_size), r->remaining());
    }
    // SetInput's checks: type, context, shape, values (all VERIFY: logic). The first
    // four do not depend on the data, so they come before it is read.
    if (code != 0)
        return cvml_fail(CVML_ERR_LOGIC, "params: array '%s': type code %u is not int", name, code);
    if ((bits != 32 && bits != 8) || lanes != 1)
        return cvml_fail(CVML_ERR_LOGIC, "params: array '%s': int%u x%u is not int8 or int32", name,
                         bits, lanes);
    if (dev_type != 1)
        return cvml_fail(CVML_ERR_LOGIC, "params: array '%s': device type %" PRId32 " is not CPU",
                         name, dev_type);
    if (ndim != t->ndim)
        return cvml_fail(CVML_ERR_LOGIC,
                         "params: array '%s': ndim %" PRId32 " does not match %" PRId32, name, ndim,
                         t->ndim);
    for (int32_t i = 0; i < ndim; ++i)
        if (shape[i] != t->dims[i])
            return cvml_fail(CVML_ERR_LOGIC,
                             "params: array '%s': dim %" PRId32 " is %lld, expected %lld", name, i,
                             static_cast<long long>(shape[i]), static_cast<long long>(t->dims[i]));
    if (t->kind == TENSOR_INPUT) {  // `data` is set at each inference
        if (!r->skip(static_cast<size_t>(byte_size)))
            return cvml_fail(CVML_ERR_RUNTIME,
                             "params: array '%s' at byte %" CVML_PRIuSIZE ": cannot read it", name,
                             start);
        return CVML_OK;
    }
    if (g->params_in_place && r->p) return borrow_or_copy(r, t, bits, elems, name, start);
    return copy_values(r, t, bits, elems, name, start);
}

/* Liveness over the file's storage plan (D2). Each tensor is written at a step (its
 * producer node; variables before the first node) and read until its last consumer
 * (or the end for graph outputs). A write into a slot while another tensor of that
 * slot is still to be read clobbers it; a parameter's slot must be its own, since a
 * parameter is written once at load and must survive every inference. */
struct slot_use {
    int32_t sid;
    int32_t write;
    int32_t last_read;
    int32_t tensor;
};

int compare_use(const void* a, const void* b) {
    const slot_use* x = static_cast<const slot_use*>(a);
    const slot_use* y = static_cast<const slot_use*>(b);
    if (x->sid != y->sid) return x->sid < y->sid ? -1 : 1;
    if (x->write != y->write) return x->write < y->write ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

bool is_output(const ir_graph* g, int32_t t) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == t) return true;
    return false;
}

int check_liveness(const ir_graph* g) {
    int32_t n = g->tensor_count;
    slot_use* uses =
        static_cast<slot_use*>(cvml_scratch_calloc(static_cast<size_t>(n) + 1, sizeof(slot_use)));
    if (!uses) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < n; ++i) {
        const ir_tensor* t = g->tensors[i];
        slot_use* u = &uses[i];
        u->sid = t->storage_id;
        u->tensor = i;
        u->write = t->kind == TENSOR_VAR ? t->producer : -1;
        u->last_read = u->write;
        for (int32_t c = 0; c < t->consumer_count; ++c)
            if (t->consumers[c] > u->last_read) u->last_read = t->consumers[c];
        if (is_output(g, i)) u->last_read = g->node_count;
    }
    cvml_sort(uses, static_cast<size_t>(n), sizeof(slot_use), compare_use);
    int rc = CVML_OK;
    for (int32_t i = 0; i < n && !rc;) {
        int32_t j = i;
        while (j < n && uses[j].sid == uses[i].sid) ++j;
        int32_t live_until = -2;  // latest last-read among tensors written earlier
        int32_t live_tensor = -1;
        for (int32_t k = i; k < j && !rc; ++k) {
            const slot_use* u = &uses[k];
            const ir_tensor* t = g->tensors[u->tensor];
            if (t->kind == TENSOR_CONST && j - i > 1) {
                const ir_tensor* other = g->tensors[uses[k == i ? i + 1 : i].tensor];
                rc = cvml_fail(CVML_ERR_LOGIC,
                               "storage plan: parameter '%s' shares storage_id %" PRId32
                               " with '%s'; it "
                               "would be overwritten",
                               t->name, u->sid, other->name);
                break;
            }
            if (k > i && uses[k - 1].write == u->write) {
                rc = cvml_fail(
                    CVML_ERR_LOGIC,
                    "storage plan: '%s' and '%s' are written together into storage_id %" PRId32,
                    g->tensors[uses[k - 1].tensor]->name, t->name, u->sid);
                break;
            }
            if (live_until > u->write) {
                rc =
                    cvml_fail(CVML_ERR_LOGIC,
                              "storage plan: node %" PRId32 " writes '%s' into storage_id %" PRId32
                              " while '%s' is "
                              "still to be read (up to node %" PRId32 ")",
                              u->write, t->name, u->sid, g->tensors[live_tensor]->name, live_until);
                break;
            }
            if (u->last_read > live_until) {
                live_until = u->last_read;
                live_tensor = u->tensor;
            }
        }
        i = j;
    }
    cvml_scratch_free(uses);
    return rc;
}

}  // namespace

int cvm_storage_size(const ir_graph* g, uint64_t* size) {
    // Sum over slots of the largest entry (int32 elements), each rounded to 4 bytes.
    int32_t n = g->tensor_count;
    slot_use* uses =
        static_cast<slot_use*>(cvml_scratch_calloc(static_cast<size_t>(n) + 1, sizeof(slot_use)));
    if (!uses) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < n; ++i) {
        uses[i].sid = g->tensors[i]->storage_id;
        uses[i].tensor = i;
    }
    cvml_sort(uses, static_cast<size_t>(n), sizeof(slot_use), compare_use);
    uint64_t total = 0;
    int rc = CVML_OK;
    for (int32_t i = 0; i < n;) {
        uint64_t largest = 0;
        int32_t j = i;
        for (; j < n && uses[j].sid == uses[i].sid; ++j) {
            uint64_t bytes =
                4 * static_cast<uint64_t>(ir_tensor_element_count(g->tensors[uses[j].tensor]));
            if (bytes > largest) largest = bytes;
        }
        total += largest;
        if (total > kMaxStorage) {
            rc = cvml_fail(CVML_ERR_LOGIC, "storage size exceeds 2^32 bytes");
            break;
        }
        i = j;
    }
    cvml_scratch_free(uses);
    if (!rc) *size = total;
    return rc;
}

int cvm_check_loadable(ir_graph* g) {
    int rc = check_liveness(g);
    // D5 and other refusals of models upstream accepts but mishandles; gas from the
    // graph JSON alone skips them and still reports upstream's figure.
    if (!rc) rc = graph_verify_load_rules(g);
    // Upstream aliases (add, nn.relu, ...) verify but have no kernel: the executor
    // lookup `cvm.runtime.cpu.<op>` fails (VERIFY, logic).
    for (int32_t n = 0; !rc && n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        if (node->op && node->op->alias)
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "node %" PRId32 " '%s': function undefined cvm.runtime.cpu.%s", n,
                           node->name, node->op->name);
    }
    uint64_t storage = 0;
    if (!rc) rc = cvm_storage_size(g, &storage);
    if (!rc && g->output_count == 0) rc = cvml_fail(CVML_ERR_LOGIC, "the graph has no heads");
    if (!rc && g->input_count == 0) rc = cvml_fail(CVML_ERR_RUNTIME, "can not find input `data`");
    if (!rc) rc = cvm_check_resource_caps(g);
    return rc;
}

namespace {

/* The constants in params-blob order, which only the CVM writer reads: kept in a block
 * of their number, or not at all where no writer is built (bare metal). */
int keep_param_order(ir_graph* g, const int32_t* order, int32_t count) {
    if (CVML_BARE_METAL) return CVML_OK;
    int32_t* kept =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * (static_cast<size_t>(count) + 1)));
    if (!kept) return cvml_fail_out_of_memory();
    memcpy(kept, order, sizeof(int32_t) * static_cast<size_t>(count));
    cvml_mem_free(g->param_order);
    g->param_order = kept;
    g->param_order_count = count;
    return CVML_OK;
}

int read_params(reader& r, ir_graph* g) {
    if (r.size == 0)
        return cvml_fail(CVML_ERR_LOGIC,
                         "params: the blob is empty (a model without params "
                         "needs the 32-byte empty dictionary)");
    uint64_t magic, reserved, n_names, n_arrays;
    if (!read_u64(&r, &magic))
        return cvml_fail(CVML_ERR_LOGIC, "params: truncated list header at byte 0");
    if (magic != kListMagic)
        return cvml_fail(CVML_ERR_LOGIC, "params: bad list magic 0x%016llx",
                         static_cast<unsigned long long>(magic));
    if (!read_u64(&r, &reserved) || !read_u64(&r, &n_names))
        return cvml_fail(CVML_ERR_LOGIC, "params: truncated list header at byte %" CVML_PRIuSIZE,
                         r.pos);
    if (n_names > r.remaining() / 8)
        return cvml_fail(CVML_ERR_LOGIC,
                         "params: %llu names cannot fit the %" CVML_PRIuSIZE " bytes left",
                         static_cast<unsigned long long>(n_names), r.remaining());
    name_ref* names = static_cast<name_ref*>(
        cvml_scratch_calloc(static_cast<size_t>(n_names) + 1, sizeof(name_ref)));
    if (!names) return cvml_fail_out_of_memory();
    // Names come before the arrays, so they are kept in one block, which only grows with
    // the bytes actually read (memory or file alike).
    char* block = nullptr;
    size_t block_used = 0, block_cap = 0;
    int rc = CVML_OK;
    for (uint64_t i = 0; i < n_names && !rc; ++i) {
        uint64_t len;
        size_t at = r.pos;
        if (!read_u64(&r, &len) || len > r.remaining()) {
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "params: name %llu at byte %" CVML_PRIuSIZE " is truncated",
                           static_cast<unsigned long long>(i), at);
            break;
        }
        names[i].len = static_cast<size_t>(len);
        names[i].offset = at;
        names[i].in_block = block_used;
        if (block_cap - block_used < len) {
            size_t cap = block_cap ? block_cap : 4096;
            while (cap - block_used < len) cap *= 2;
            char* grown = static_cast<char*>(cvml_scratch_realloc(block, cap));
            if (!grown) {
                rc = cvml_fail_out_of_memory();
                break;
            }
            block = grown;
            block_cap = cap;
        }
        if (!r.read(block + block_used, static_cast<size_t>(len))) {
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "params: name %llu at byte %" CVML_PRIuSIZE " is truncated",
                           static_cast<unsigned long long>(i), at);
            break;
        }
        block_used += static_cast<size_t>(len);
    }
    // The block may have moved while it grew, so names point into it only now.
    for (uint64_t i = 0; i < n_names && !rc; ++i)
        names[i].p = block ? block + names[i].in_block : "";  // no block: all empty
    if (!rc && (!read_u64(&r, &n_arrays) || n_arrays != n_names))
        rc = cvml_fail(CVML_ERR_LOGIC, "params: the array count does not match the %llu names",
                       static_cast<unsigned long long>(n_names));

    uint8_t* set =
        static_cast<uint8_t*>(cvml_scratch_calloc(static_cast<size_t>(g->tensor_count) + 1, 1));
    int32_t* order = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->tensor_count) + 1)));
    int32_t order_count = 0;
    if (!rc && (!set || !order)) rc = cvml_fail_out_of_memory();
    name_index variables = {nullptr, 0};
    if (!rc) rc = index_variables(g, &variables);
    for (uint64_t i = 0; i < n_names && !rc; ++i) {
        char shown[128];
        size_t sl = names[i].len < sizeof shown - 1 ? names[i].len : sizeof shown - 1;
        memcpy(shown, names[i].p, sl);
        shown[sl] = '\0';
        ir_tensor* t = find_variable(g, &variables, names[i]);
        if (!t) {
            rc = cvml_fail(CVML_ERR_RUNTIME,
                           "params: cannot find `%s` among input (name at byte %" CVML_PRIuSIZE ")",
                           shown, names[i].offset);
            break;
        }
        rc = read_array(&r, g, t, shown, i + 1 == n_names);
        if (rc) break;
        if (t->kind == TENSOR_CONST && !set[t->index]) order[order_count++] = t->index;
        set[t->index] = 1;
    }
    for (int32_t i = 0; !rc && i < g->tensor_count; ++i) {
        const ir_tensor* t = g->tensors[i];
        if (t->kind == TENSOR_CONST && !set[i])
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "params: parameter nid=%" PRId32 " name=%s has not been loaded",
                           t->producer, t->name);
    }
    if (!rc) rc = keep_param_order(g, order, order_count);
    name_index_free(&variables);
    cvml_scratch_free(order);
    cvml_scratch_free(set);
    cvml_scratch_free(names);
    cvml_scratch_free(block);
    return rc;
}

}  // namespace

int cvm_read_params(const uint8_t* data, size_t size, ir_graph* g) {
    if (!data) size = 0;
    reader r = {data, nullptr, size, 0};
    return read_params(r, g);
}

#if !CVML_BARE_METAL  // bare metal reads params from memory only (reader's p set)
int cvm_read_params_file(FILE* f, size_t size, ir_graph* g) {
    reader r = {nullptr, f, size, 0};
    return read_params(r, g);
}
#endif
