// cvml_graph_load_memory_ex(): constants read in place from the caller's params buffer
// (CVML_LOAD_PARAMS_IN_PLACE) and the caller's arena. The model is built, saved to
// memory and loaded back, so the test needs nothing from ../shared.
#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cvml.h"
#include "graph/graph.h"
#include "module/graph_handle.h"
#include "utility/memory.h"

namespace {

constexpr int kIn = 4 * 6 * 6;
constexpr int kOut = 8 * 6 * 6;

/* A blob placed `offset` bytes into a buffer of its own, with room after it. */
struct Placed {
    std::vector<uint8_t> storage;
    size_t offset;
    size_t size;
    const uint8_t* data() const { return storage.data() + offset; }
    uint8_t* data() { return storage.data() + offset; }
};

struct LoadMemory : ::testing::Test {
    cvml_context* ctx = nullptr;
    std::string graph;
    std::vector<uint8_t> params;
    std::vector<int32_t> input;

    void SetUp() override {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
        build_and_save();
        for (int i = 0; i < kIn; ++i) input.push_back((i * 37) % 255 - 127);
    }
    void TearDown() override {
        cvml_context_release(ctx);
        cvml_release();
    }

    /* data (1,4,6,6) -> conv2d 3x3 pad 1 (int8 weights 8x4x3x3, int32 bias) ->
     * cvm_right_shift(8, 5) -> relu. */
    void build_and_save() {
        cvml_graph* g = nullptr;
        ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
        const int32_t xd[4] = {1, 4, 6, 6}, wd[4] = {8, 4, 3, 3}, bd[1] = {8};
        std::vector<int32_t> w(8 * 4 * 9), b(8);
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int32_t>(i * 53 % 255) - 127;
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int32_t>(i * 1000) - 3500;
        cvml_tensor *x = nullptr, *wt = nullptr, *bt = nullptr, *y = nullptr, *z = nullptr,
                    *r = nullptr;
        ASSERT_EQ(cvml_graph_add_input(g, "data", 4, xd, 8, &x), CVML_OK);
        ASSERT_EQ(cvml_graph_add_const(g, "w", 4, wd, 8, w.data(), &wt), CVML_OK);
        ASSERT_EQ(cvml_graph_add_const(g, "b", 1, bd, 20, b.data(), &bt), CVML_OK);
        const char* keys[] = {"channels", "kernel_size", "padding"};
        const char* values[] = {"8", "(3, 3)", "(1, 1)"};
        cvml_tensor* ins[3] = {x, wt, bt};
        ASSERT_EQ(cvml_graph_add_node(g, "conv2d", "conv", keys, values, 3, ins, 3, &y, 1), CVML_OK)
            << cvml_last_error();
        const char* sk[] = {"precision", "shift_bit"};
        const char* sv[] = {"8", "5"};
        ASSERT_EQ(cvml_graph_add_node(g, "cvm_right_shift", "shift", sk, sv, 2, &y, 1, &z, 1),
                  CVML_OK);
        ASSERT_EQ(cvml_graph_add_node(g, "relu", "relu", nullptr, nullptr, 0, &z, 1, &r, 1),
                  CVML_OK);
        ASSERT_EQ(cvml_graph_set_outputs(g, &r, 1), CVML_OK);
        ASSERT_EQ(cvml_graph_verify(g), CVML_OK) << cvml_last_error();
        void *gd = nullptr, *pd = nullptr;
        size_t gs = 0, ps = 0;
        ASSERT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), CVML_OK)
            << cvml_last_error();
        graph.assign(static_cast<const char*>(gd), gs);
        params.assign(static_cast<const uint8_t*>(pd), static_cast<const uint8_t*>(pd) + ps);
        cvml_free(gd);
        cvml_free(pd);
        cvml_graph_release(g);
    }

    Placed place(size_t offset, size_t room_after) const {
        Placed p{std::vector<uint8_t>(offset + params.size() + room_after + 8, 0), offset,
                 params.size()};
        // vector storage is aligned for any scalar, so `offset` decides the alignment.
        std::copy(params.begin(), params.end(), p.storage.begin() + static_cast<long>(offset));
        return p;
    }

    int load(const Placed& p, const cvml_load_options* o, cvml_graph** g) const {
        return cvml_graph_load_memory_ex(ctx, "cvm", graph.data(), graph.size(), p.data(), p.size,
                                         o, g);
    }

    std::vector<int32_t> run(cvml_graph* g) const {
        cvml_tensor *in = nullptr, *out = nullptr;
        EXPECT_EQ(cvml_graph_get_input(g, 0, &in), CVML_OK);
        EXPECT_EQ(cvml_tensor_set_i32(in, input.data(), input.size()), CVML_OK);
        EXPECT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
        EXPECT_EQ(cvml_graph_get_output(g, 0, &out), CVML_OK);
        std::vector<int32_t> v(kOut);
        EXPECT_EQ(cvml_tensor_get_i32(out, v.data(), v.size()), CVML_OK);
        return v;
    }

    std::vector<int32_t> reference() const {
        cvml_graph* g = nullptr;
        Placed p = place(0, 0);
        EXPECT_EQ(load(p, nullptr, &g), CVML_OK) << cvml_last_error();
        std::vector<int32_t> v = run(g);
        cvml_graph_release(g);
        return v;
    }
};

const ir_tensor* constant(cvml_graph* g, const char* name) {
    return ir_graph_find_tensor(g->ir, name);
}

bool inside(const void* p, const Placed& b) {
    const uint8_t* q = static_cast<const uint8_t*>(p);
    return q >= b.data() && q < b.data() + b.size;
}

TEST_F(LoadMemory, InPlaceConstantsPointIntoTheBuffer) {
    const std::vector<int32_t> want = reference();
    Placed p = place(0, 64);
    const std::vector<uint8_t> before = p.storage;
    cvml_load_options o = {sizeof o, CVML_LOAD_PARAMS_IN_PLACE, nullptr, 0};
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
    const ir_tensor* w = constant(g, "w");
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->const_borrowed);
    EXPECT_EQ(w->storage, STORAGE_INT8);
    EXPECT_TRUE(inside(w->const_data, p));
    EXPECT_EQ(run(g), want);
    ASSERT_EQ(cvml_graph_release(g), CVML_OK);
    EXPECT_EQ(p.storage, before);  // read, never written
}

TEST_F(LoadMemory, WithoutTheFlagConstantsAreCopied) {
    Placed p = place(0, 64);
    cvml_load_options o = {sizeof o, 0, nullptr, 0};
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
    EXPECT_FALSE(constant(g, "w")->const_borrowed);
    EXPECT_FALSE(inside(constant(g, "w")->const_data, p));
    EXPECT_FALSE(constant(g, "b")->const_borrowed);
    cvml_graph_release(g);
}

TEST_F(LoadMemory, MisalignedInt32AndShortTailAreCopied) {
    const std::vector<int32_t> want = reference();
    // Over the four offsets mod 4 the int32 bias is aligned at exactly one: borrowed
    // there, copied at the others. With no room after the blob an int8 array at its end
    // could not be read 64 bytes past it.
    int bias_borrowed = 0;
    for (size_t offset = 0; offset < 4; ++offset) {
        Placed p = place(offset, 0);
        cvml_load_options o = {sizeof o, CVML_LOAD_PARAMS_IN_PLACE, nullptr, 0};
        cvml_graph* g = nullptr;
        ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
        for (const char* name : {"w", "b"}) {
            const ir_tensor* t = constant(g, name);
            if (!t->const_borrowed) continue;
            ASSERT_TRUE(inside(t->const_data, p)) << name;
            const uint8_t* at = static_cast<const uint8_t*>(t->const_data);
            const int64_t bytes = ir_tensor_element_count(t) * t->file_bits / 8;
            if (t->file_bits == 32)
                EXPECT_EQ(reinterpret_cast<uintptr_t>(at) % 4, 0u) << name;
            else
                EXPECT_GE(p.data() + p.size - (at + bytes), 64) << name;
        }
        EXPECT_EQ(constant(g, "b")->file_bits, 32);
        bias_borrowed += constant(g, "b")->const_borrowed;
        EXPECT_EQ(run(g), want) << "offset " << offset;
        cvml_graph_release(g);
    }
    EXPECT_EQ(bias_borrowed, 1);
}

TEST_F(LoadMemory, InPlaceValuesAreStillChecked) {
    // The weights are the only int8 array: find one of them and push it past 127.
    Placed p = place(0, 64);
    cvml_load_options o = {sizeof o, CVML_LOAD_PARAMS_IN_PLACE, nullptr, 0};
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, &o, &g), CVML_OK);
    const size_t at = static_cast<const uint8_t*>(constant(g, "w")->const_data) - p.data();
    cvml_graph_release(g);
    p.data()[at + 3] = 0x80;  // -128
    EXPECT_EQ(load(p, &o, &g), CVML_ERR_LOGIC);
    EXPECT_NE(std::string(cvml_last_error()).find("exceeds precision"), std::string::npos)
        << cvml_last_error();
    EXPECT_EQ(g, nullptr);
}

TEST_F(LoadMemory, CallersArenaHoldsEveryIntermediate) {
    const std::vector<int32_t> want = reference();
    Placed p = place(0, 64);
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, nullptr, &g), CVML_OK);
    size_t need = 0;
    ASSERT_EQ(cvml_graph_arena_bytes(g, &need), CVML_OK);
    EXPECT_GT(need, 0u);
    cvml_graph_release(g);

    // An odd start: the arena may have any alignment.
    std::vector<uint8_t> arena(need + 1);
    cvml_load_options o = {sizeof o, CVML_LOAD_PARAMS_IN_PLACE, arena.data() + 1, need};
    ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
    for (int32_t i = 0; i < g->ir->tensor_count; ++i) {
        const ir_tensor* t = g->ir->tensors[i];
        if (t->kind != TENSOR_VAR || !t->data) continue;  // fused away: no buffer
        const uint8_t* d = static_cast<const uint8_t*>(t->data);
        EXPECT_TRUE(d >= arena.data() + 1 && d < arena.data() + 1 + need) << t->name;
    }
    EXPECT_EQ(run(g), want);
    EXPECT_EQ(run(g), want);  // a second run reuses the arena
    cvml_graph_release(g);
}

// The arena is the load's scratch before the graph is prepared in it (the JSON's
// pieces live there, not in the heap; scripts/test_mcu.sh measures the heap saved):
// the result is the same, and an arena that shares bytes with the graph JSON (a caller
// reusing the buffer it read the JSON into) is not written before the JSON is read.
TEST_F(LoadMemory, ArenaIsTheLoadsScratchUnlessItHoldsTheInput) {
    const std::vector<int32_t> want = reference();
    Placed p = place(0, 64);
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, nullptr, &g), CVML_OK);
    size_t need = 0;
    ASSERT_EQ(cvml_graph_arena_bytes(g, &need), CVML_OK);
    cvml_graph_release(g);

    std::vector<uint8_t> arena(need + graph.size() + 64, 0xA5);
    cvml_load_options o = {sizeof o, CVML_LOAD_PARAMS_IN_PLACE, arena.data(), arena.size()};
    ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
    EXPECT_EQ(run(g), want);
    cvml_graph_release(g);

    // The JSON at the start of the arena buffer: read intact, then the arena is used.
    memcpy(arena.data(), graph.data(), graph.size());
    o.arena = arena.data();
    ASSERT_EQ(
        cvml_graph_load_memory_ex(ctx, "cvm", arena.data(), graph.size(), p.data(), p.size, &o, &g),
        CVML_OK)
        << cvml_last_error();
    EXPECT_EQ(run(g), want);
    cvml_graph_release(g);
}

TEST(Scratch, BlocksComeFromTheRegionNewestFirst) {
    alignas(16) static uint8_t region[1024];
    const auto in_region = [](const void* p) {
        return static_cast<const uint8_t*>(p) >= region &&
               static_cast<const uint8_t*>(p) < region + sizeof region;
    };
    cvml_scratch_begin(region, sizeof region);
    void* a = cvml_scratch_alloc(100);
    void* b = cvml_scratch_alloc(200);
    void* big = cvml_scratch_alloc(5000);  // does not fit: from the heap
    EXPECT_TRUE(in_region(a));
    EXPECT_TRUE(in_region(b));
    EXPECT_FALSE(in_region(big));
    memset(b, 7, 200);
    void* grown = cvml_scratch_realloc(b, 400);  // the newest grows where it is
    EXPECT_EQ(grown, b);
    EXPECT_EQ(static_cast<uint8_t*>(grown)[199], 7);
    void* moved = cvml_scratch_realloc(a, 150);  // not the newest: moves up
    EXPECT_TRUE(in_region(moved));
    EXPECT_NE(moved, a);
    cvml_scratch_free(big);
    cvml_scratch_free(grown);
    void* again = cvml_scratch_alloc(8);  // a's space is still held below `moved`
    EXPECT_TRUE(in_region(again));
    cvml_scratch_free(again);
    cvml_scratch_free(moved);  // everything popped
    EXPECT_EQ(cvml_scratch_alloc(64), a);
    EXPECT_EQ(cvml_scratch_end(), 0);  // that block was not given back
    cvml_scratch_begin(region, sizeof region);
    cvml_scratch_free(cvml_scratch_alloc(10));
    EXPECT_EQ(cvml_scratch_end(), 1);
    // Without a region every block is the heap's.
    void* h = cvml_scratch_alloc(16);
    EXPECT_FALSE(in_region(h));
    cvml_scratch_free(h);
}

TEST_F(LoadMemory, ArenaTooSmallNamesTheBytesNeeded) {
    Placed p = place(0, 64);
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(p, nullptr, &g), CVML_OK);
    size_t need = 0;
    ASSERT_EQ(cvml_graph_arena_bytes(g, &need), CVML_OK);
    cvml_graph_release(g);
    std::vector<uint8_t> arena(need);
    cvml_load_options o = {sizeof o, 0, arena.data(), need - 1};
    EXPECT_EQ(load(p, &o, &g), CVML_ERR_LOGIC);
    EXPECT_EQ(g, nullptr);
    const std::string msg = cvml_last_error();
    EXPECT_NE(msg.find(std::to_string(need) + " bytes"), std::string::npos) << msg;
}

TEST_F(LoadMemory, OptionsAreChecked) {
    Placed p = place(0, 64);
    cvml_graph* g = nullptr;
    cvml_load_options o = {0, 0, nullptr, 0};
    EXPECT_EQ(load(p, &o, &g), CVML_ERR_LOGIC);
    o = {sizeof o, 0x80u, nullptr, 0};
    EXPECT_EQ(load(p, &o, &g), CVML_ERR_LOGIC);
    EXPECT_NE(std::string(cvml_last_error()).find("unknown flag"), std::string::npos);
    // An older caller's struct without the arena fields is still read.
    o = {offsetof(cvml_load_options, arena), CVML_LOAD_PARAMS_IN_PLACE, reinterpret_cast<void*>(1),
         1};
    ASSERT_EQ(load(p, &o, &g), CVML_OK) << cvml_last_error();
    cvml_graph_release(g);
}

}  // namespace

namespace {

/* Counts what goes through a caller's allocator, backed by malloc with a size header. */
struct counting {
    size_t allocs = 0;
    int64_t live = 0;
};

void* counted_alloc(void* user, size_t size) {
    counting* c = static_cast<counting*>(user);
    size_t* p = static_cast<size_t*>(malloc(size + 16));
    if (!p) return nullptr;
    *p = size;
    ++c->allocs;
    c->live += static_cast<int64_t>(size);
    return reinterpret_cast<uint8_t*>(p) + 16;
}

void counted_release(void* user, void* block) {
    if (!block) return;
    size_t* p = reinterpret_cast<size_t*>(static_cast<uint8_t*>(block) - 16);
    static_cast<counting*>(user)->live -= static_cast<int64_t>(*p);
    free(p);
}

void* counted_resize(void* user, void* block, size_t size) {
    void* moved = counted_alloc(user, size);
    if (moved && block) {
        const size_t old = *reinterpret_cast<size_t*>(static_cast<uint8_t*>(block) - 16);
        memcpy(moved, block, old < size ? old : size);
        counted_release(user, block);
    }
    return moved;
}

TEST(Allocator, EveryAllocationGoesThroughTheCallersAndIsReturned) {
    counting c;
    const cvml_allocator a = {sizeof a, counted_alloc, counted_resize, counted_release, &c};
    ASSERT_EQ(cvml_set_allocator(&a), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_init(), CVML_OK);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
    cvml_graph* g = nullptr;
    const int32_t dims[2] = {4, 16};
    cvml_tensor *x = nullptr, *y = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
    std::vector<int32_t> in(64, -3), out(64, 9);
    ASSERT_EQ(cvml_tensor_set_i32(x, in.data(), in.size()), CVML_OK);
    ASSERT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_tensor_get_i32(y, out.data(), out.size()), CVML_OK);
    EXPECT_EQ(out, std::vector<int32_t>(64, 0));
    EXPECT_GT(c.allocs, 0u);
    EXPECT_GT(c.live, 0);
    // Not while the library holds memory.
    EXPECT_EQ(cvml_set_allocator(nullptr), CVML_ERR_LOGIC);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    EXPECT_EQ(c.live, 0);  // everything came back through release
    ASSERT_EQ(cvml_set_allocator(nullptr), CVML_OK);
}

// A node the builder refuses gives back everything it took, its names and attribute
// strings too (they live in the graph's string chunks): refusing it again and again
// holds no more memory than refusing it once.
TEST(Allocator, RefusedBuilderNodesHoldNothing) {
    counting c;
    const cvml_allocator a = {sizeof a, counted_alloc, counted_resize, counted_release, &c};
    ASSERT_EQ(cvml_set_allocator(&a), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_init(), CVML_OK);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
    cvml_graph* g = nullptr;
    const int32_t dims[2] = {4, 16};
    cvml_tensor *x = nullptr, *y = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK);
    const std::string long_name(3000, 'n');  // a string chunk of its own
    const char* keys[2] = {"a_key", "another"};
    const char* values[2] = {"1", "(2, 3)"};
    int64_t live_after_first = 0;
    for (int i = 0; i < 50; ++i) {
        cvml_tensor* out = nullptr;
        // relu takes no attributes: refused once the node is made.
        EXPECT_NE(cvml_graph_add_node(g, "relu", i % 2 ? "bad" : long_name.c_str(), keys, values, 2,
                                      &y, 1, &out, 1),
                  CVML_OK);
        if (i == 1) live_after_first = c.live;
        if (i > 1) {
            EXPECT_EQ(c.live, live_after_first) << "try " << i;
        }
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    EXPECT_EQ(c.live, 0);
    ASSERT_EQ(cvml_set_allocator(nullptr), CVML_OK);
}

TEST(Allocator, IncompleteAllocatorsAreRefused) {
    counting c;
    cvml_allocator a = {sizeof a, counted_alloc, nullptr, counted_release, &c};
    EXPECT_EQ(cvml_set_allocator(&a), CVML_ERR_LOGIC);
    a = {sizeof a - 1, counted_alloc, counted_resize, counted_release, &c};
    EXPECT_EQ(cvml_set_allocator(&a), CVML_ERR_LOGIC);
    EXPECT_EQ(cvml_set_allocator(nullptr), CVML_OK);
}

}  // namespace
