// The arena planner: the exact greedy gives the same offsets as the plain cubic
// statement of it, both methods keep buffers alive at once apart, and hostile shapes
// (thousands of buffers alive together, long chains) plan in bounded time.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "module/plan/memory_plan.h"

namespace {

size_t aligned(size_t n, size_t align) {
    return (n + align - 1) & ~(align - 1);
}

bool meet(const plan_request& a, const plan_request& b) {
    return a.first <= b.last && b.first <= a.last;
}

/* The definition, written plainly: by decreasing size (ties by index), each buffer at the
 * lowest of 0 and the ends of the placed buffers it meets where it fits. */
size_t reference_plan(std::vector<plan_request>& r, size_t align) {
    std::vector<size_t> order;
    for (size_t i = 0; i < r.size(); ++i) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return r[a].size > r[b].size; });
    std::vector<size_t> placed;
    size_t total = 0;
    for (size_t i : order) {
        size_t size = aligned(r[i].size, align);
        size_t best = SIZE_MAX;
        std::vector<size_t> candidates{0};
        for (size_t p : placed)
            if (meet(r[p], r[i])) candidates.push_back(r[p].offset + aligned(r[p].size, align));
        for (size_t c : candidates) {
            bool fits = true;
            for (size_t p : placed) {
                if (!meet(r[p], r[i]) || size == 0) continue;
                size_t end = r[p].offset + aligned(r[p].size, align);
                if (!(c + size <= r[p].offset || end <= c)) fits = false;
            }
            if (fits && c < best) best = c;
        }
        if (size == 0) best = 0;
        r[i].offset = best;
        if (best + size > total) total = best + size;
        placed.push_back(i);
    }
    return total;
}

void expect_disjoint(const std::vector<plan_request>& r, size_t align, size_t arena) {
    for (size_t i = 0; i < r.size(); ++i) {
        size_t si = aligned(r[i].size, align);
        if (si == 0) continue;
        EXPECT_EQ(r[i].offset % align, 0u);
        EXPECT_LE(r[i].offset + si, arena);
        for (size_t j = i + 1; j < r.size(); ++j) {
            size_t sj = aligned(r[j].size, align);
            if (sj == 0 || !meet(r[i], r[j])) continue;
            bool apart = r[i].offset + si <= r[j].offset || r[j].offset + sj <= r[i].offset;
            ASSERT_TRUE(apart) << "buffers " << i << " and " << j << " share bytes";
        }
    }
}

std::vector<plan_request> random_requests(std::mt19937& rng, int n, int steps) {
    std::vector<plan_request> r(static_cast<size_t>(n));
    for (auto& q : r) {
        q.first = static_cast<int32_t>(rng() % static_cast<unsigned>(steps));
        q.last = q.first + static_cast<int32_t>(rng() % 6);
        // Some sizes repeat, some are zero (scratch a node does not need).
        unsigned kind = rng() % 8;
        q.size = kind == 0 ? 0 : kind < 3 ? 4096 : 1 + rng() % 20000;
    }
    return r;
}

}  // namespace

TEST(MemoryPlan, ExactMatchesTheDefinition) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        auto r = random_requests(rng, 1 + round % 60, 1 + round % 25);
        auto expected = r;
        size_t want = reference_plan(expected, 64);
        size_t arena = 0;
        ASSERT_EQ(memory_plan(r.data(), static_cast<int32_t>(r.size()), 64, &arena), 0);
        ASSERT_EQ(arena, want) << "round " << round;
        for (size_t i = 0; i < r.size(); ++i)
            ASSERT_EQ(r[i].offset, expected[i].offset) << "round " << round << " buffer " << i;
    }
}

TEST(MemoryPlan, TimeOrderKeepsLiveBuffersApart) {
    std::mt19937 rng(11);
    for (int round = 0; round < 200; ++round) {
        auto r = random_requests(rng, 1 + round % 80, 1 + round % 30);
        size_t arena = 0;
        ASSERT_EQ(memory_plan_ex(r.data(), static_cast<int32_t>(r.size()), 64, -1, &arena), 0);
        expect_disjoint(r, 64, arena);
        size_t sum = 0;
        for (const auto& q : r) sum += aligned(q.size, 64);
        EXPECT_LE(arena, sum);
    }
}

TEST(MemoryPlan, TimeOrderReusesAChain) {
    // A chain of equal buffers, each read by the next step: two blocks suffice.
    std::vector<plan_request> r(1000);
    for (int i = 0; i < 1000; ++i) r[static_cast<size_t>(i)] = {1000, i, i + 1, 0};
    size_t arena = 0;
    ASSERT_EQ(memory_plan_ex(r.data(), 1000, 64, -1, &arena), 0);
    EXPECT_EQ(arena, 2 * aligned(1000, 64));
    expect_disjoint(r, 64, arena);
}

// The shapes of issue 18: data feeding 8,000 heads alive to the end (the cubic planner
// took minutes) and a 100,000-step chain. Each plans in milliseconds in a release build;
// the bound is loose (ASan on a loaded 2-vCPU machine took 2 s) yet far below minutes.
TEST(MemoryPlan, HostileShapesPlanFast) {
    std::vector<plan_request> heads;
    heads.push_back({800, 0, 8001, 0});
    for (int i = 0; i < 8000; ++i) heads.push_back({800, i + 1, 8001, 0});
    std::vector<plan_request> chain;
    for (int i = 0; i < 100000; ++i) {
        chain.push_back({400, i, i + 1, 0});
        chain.push_back({static_cast<size_t>(i % 3 ? 0 : 256), i, i, 0});
    }
    for (auto* r : {&heads, &chain}) {
        auto start = std::chrono::steady_clock::now();
        size_t arena = 0;
        ASSERT_EQ(memory_plan(r->data(), static_cast<int32_t>(r->size()), 64, &arena), 0);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_LT(seconds, 10.0) << r->size() << " buffers";
        EXPECT_LE(arena, (r == &heads ? 8001u : 3u) * aligned(800, 64));
    }
}
