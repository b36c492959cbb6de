// The compiled plan's container (source/serializer/plan/plan_file.h): a written file
// reads back, and every truncation and every single-byte change of it fails with a
// message naming a byte of the file, both as changed (the checksum catches it) and with
// the checksum made right again (so that the checks behind it run).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "cvml.h"
#include "device/cpu/simd/simd.h"
#include "serializer/plan/plan_file.h"

namespace {

struct Plan {
    std::vector<std::vector<uint8_t>> payloads;  // by enum plan_tag
    std::vector<uint8_t> bytes;
};

// A payload of whole records with no zero byte, so a section moved or shortened by one
// changed byte leaves non-zero bytes where padding must be zero.
std::vector<uint8_t> payload(int tag, size_t size) {
    std::vector<uint8_t> p(size);
    for (size_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>((i * 31 + tag * 7) % 255 + 1);
    return p;
}

int write(const plan_target& target, const std::vector<plan_section_in>& in,
          std::vector<uint8_t>* out) {
    size_t size = 0;
    int rc = plan_file_size(in.data(), static_cast<int32_t>(in.size()), &size);
    if (rc) return rc;
    out->assign(size, 0xee);
    return plan_file_write(&target, in.data(), static_cast<int32_t>(in.size()), out->data(), size);
}

// Every tag, with sizes that need padding before the aligned ones.
Plan make_plan(plan_target target = {PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR, 1}) {
    static const size_t kSizes[PLAN_TAG_COUNT] = {128, 96, 96, 80, 12, 20, 16, 5, 13, 70, 16, 130};
    Plan p;
    std::vector<plan_section_in> in;
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) p.payloads.push_back(payload(t, kSizes[t]));
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        in.push_back({t, p.payloads[static_cast<size_t>(t)].data(), kSizes[t]});
    EXPECT_EQ(write(target, in, &p.bytes), CVML_OK) << cvml_last_error();
    return p;
}

// The checksum of the file as it now is (bytes 20..23 read as zero).
void fix_checksum(std::vector<uint8_t>* f) {
    std::vector<uint8_t> copy = *f;
    memset(copy.data() + 20, 0, 4);
    const uint32_t crc = plan_crc32(0, copy.data(), copy.size());
    for (int k = 0; k < 4; ++k)
        (*f)[20 + static_cast<size_t>(k)] = static_cast<uint8_t>(crc >> (8 * k));
}

// The byte a message names ("compiled plan: byte N: ..."), or -1.
long named_byte(const std::string& msg) {
    static const char kPrefix[] = "compiled plan: byte ";
    if (msg.compare(0, sizeof kPrefix - 1, kPrefix) != 0) return -1;
    char* end = nullptr;
    const long n = strtol(msg.c_str() + sizeof kPrefix - 1, &end, 10);
    return end && *end == ':' ? n : -1;
}

// A failed read: a status, a message naming a byte before `limit`, and a cleared view.
void expect_refused(int rc, const plan_file& f, size_t limit, const std::string& what) {
    ASSERT_NE(rc, CVML_OK) << what;
    const std::string msg = cvml_last_error();
    const long at = named_byte(msg);
    EXPECT_GE(at, 0) << what << ": " << msg;
    EXPECT_LT(at, static_cast<long>(limit)) << what << ": " << msg;
    for (const plan_section& s : f.sections) EXPECT_EQ(s.data, nullptr) << what;
}

// Which section's payload holds byte k, or -1.
int payload_of(const plan_file& f, size_t k) {
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        if (f.sections[t].data && k >= f.sections[t].offset &&
            k < static_cast<size_t>(f.sections[t].offset) + f.sections[t].size)
            return t;
    return -1;
}

TEST(PlanFile, Crc32IsZlibs) {
    const char* s = "123456789";
    EXPECT_EQ(plan_crc32(0, reinterpret_cast<const uint8_t*>(s), 9), 0xcbf43926u);
    EXPECT_EQ(plan_crc32(plan_crc32(0, reinterpret_cast<const uint8_t*>(s), 4),
                         reinterpret_cast<const uint8_t*>(s) + 4, 5),
              0xcbf43926u);
}

TEST(PlanFile, ReadsBackWhatWasWritten) {
    // A build without threads reads only single-thread plans (TargetsThisBuildCannotRun).
    const int threads = CVML_WITH_THREADS ? 3 : 1;
    const Plan p = make_plan({PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR, threads});
    plan_file f;
    ASSERT_EQ(plan_file_read(p.bytes.data(), p.bytes.size(), &f), CVML_OK) << cvml_last_error();
    EXPECT_EQ(f.size, p.bytes.size());
    EXPECT_EQ(f.target.family, PLAN_FAMILY_PORTABLE);
    EXPECT_EQ(f.target.threads, threads);
    EXPECT_EQ(f.minor, PLAN_FORMAT_MINOR);
    EXPECT_EQ(memcmp(p.bytes.data(), "CVMC\r\n\x1a\n", 8), 0);
    static const uint32_t kAlign[PLAN_TAG_COUNT] = {8, 8, 8, 8, 4, 4, 4, 1, 8, 64, 4, 64};
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) {
        const plan_section& s = f.sections[t];
        const std::vector<uint8_t>& want = p.payloads[static_cast<size_t>(t)];
        ASSERT_EQ(s.size, want.size()) << plan_tag_name(t);
        EXPECT_EQ(s.data, p.bytes.data() + s.offset) << plan_tag_name(t);
        EXPECT_EQ(s.offset % kAlign[t], 0u) << plan_tag_name(t);
        EXPECT_EQ(memcmp(s.data, want.data(), want.size()), 0) << plan_tag_name(t);
    }
    EXPECT_STREQ(plan_tag_name(PLAN_CNST), "CNST");
}

TEST(PlanFile, OptionalSectionsMayBeAbsent) {
    const std::vector<uint8_t> g = payload(PLAN_GRPH, 128), k = payload(PLAN_KERN, 48);
    const std::vector<plan_section_in> in = {{PLAN_GRPH, g.data(), 128}, {PLAN_KERN, k.data(), 48},
                                             {PLAN_STEP, nullptr, 0},    {PLAN_TENS, nullptr, 0},
                                             {PLAN_SLOT, nullptr, 0},    {PLAN_IOTB, nullptr, 0},
                                             {PLAN_NAME, nullptr, 0},    {PLAN_CNST, nullptr, 0}};
    std::vector<uint8_t> bytes;
    ASSERT_EQ(write({PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR, 1}, in, &bytes), CVML_OK)
        << cvml_last_error();
    plan_file f;
    ASSERT_EQ(plan_file_read(bytes.data(), bytes.size(), &f), CVML_OK) << cvml_last_error();
    EXPECT_EQ(f.sections[PLAN_STAT].data, nullptr);
    EXPECT_EQ(f.sections[PLAN_CNST].size, 0u);
    EXPECT_NE(f.sections[PLAN_CNST].data, nullptr);
}

TEST(PlanFile, EveryTruncationIsRefused) {
    const Plan p = make_plan();
    for (size_t n = 0; n < p.bytes.size(); ++n) {
        // A copy of exactly n bytes, so that a read past them is a sanitizer's error.
        std::vector<uint8_t> cut(p.bytes.begin(), p.bytes.begin() + static_cast<long>(n));
        plan_file f;
        const int rc = plan_file_read(cut.data(), n, &f);
        expect_refused(rc, f, p.bytes.size(), "truncated to " + std::to_string(n));
        if (n < PLAN_HEADER_SIZE)
            EXPECT_EQ(named_byte(cvml_last_error()), static_cast<long>(n));
        else
            EXPECT_NE(std::string(cvml_last_error()).find("byte 16: the file declares"),
                      std::string::npos)
                << cvml_last_error();
    }
}

TEST(PlanFile, EverySingleByteChangeIsRefused) {
    const Plan p = make_plan();
    for (size_t k = 0; k < p.bytes.size(); ++k) {
        for (uint8_t x : {0x01, 0x80, 0xff}) {
            std::vector<uint8_t> bad = p.bytes;
            bad[k] ^= x;
            plan_file f;
            const int rc = plan_file_read(bad.data(), bad.size(), &f);
            expect_refused(rc, f, p.bytes.size(), "byte " + std::to_string(k));
        }
    }
}

// The file plan_file_write makes of what plan_file_read found in f.
std::vector<uint8_t> rewrite(const plan_file& f) {
    std::vector<plan_section_in> in;
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        if (f.sections[t].data) in.push_back({t, f.sections[t].data, f.sections[t].size});
    std::vector<uint8_t> out;
    EXPECT_EQ(write(f.target, in, &out), CVML_OK) << cvml_last_error();
    return out;
}

// With the checksum made right, a change is refused unless it leaves a well-formed file:
// inside a section's payload (which this layer does not read), another valid thread
// count, or a size that takes in the zero padding after its section (a section of
// 1-byte records one byte longer). Then writing the sections read gives the same bytes.
TEST(PlanFile, EverySingleByteChangeBehindTheChecksum) {
    const Plan p = make_plan();
    int accepted = 0;
    for (size_t k = 0; k < p.bytes.size(); ++k) {
        for (uint8_t x : {0x01, 0x80, 0xff}) {
            std::vector<uint8_t> bad = p.bytes;
            bad[k] ^= x;
            fix_checksum(&bad);
            plan_file f;
            const int rc = plan_file_read(bad.data(), bad.size(), &f);
            const std::string what = "byte " + std::to_string(k) + " ^ " + std::to_string(x);
            if (rc) {
                expect_refused(rc, f, p.bytes.size(), what);
                continue;
            }
            ++accepted;
            const bool checksum = k >= 20 && k < 24, threads = k == 26;
            const size_t table_end = PLAN_HEADER_SIZE + PLAN_TAG_COUNT * PLAN_ENTRY_SIZE;
            const bool size_field = k >= PLAN_HEADER_SIZE && k < table_end &&
                                    (k - PLAN_HEADER_SIZE) % 16 >= 8 &&
                                    (k - PLAN_HEADER_SIZE) % 16 < 12;
            EXPECT_TRUE(checksum || threads || size_field || payload_of(f, k) >= 0) << what;
            EXPECT_TRUE(rewrite(f) == bad) << what;
        }
    }
    EXPECT_GT(accepted, 0);
}

// A change made right behind the checksum, then read: the status and the message.
std::string refusal(size_t at, uint8_t value, int want_rc) {
    Plan p = make_plan();
    p.bytes[at] = value;
    fix_checksum(&p.bytes);
    plan_file f;
    EXPECT_EQ(plan_file_read(p.bytes.data(), p.bytes.size(), &f), want_rc);
    return cvml_last_error();
}

TEST(PlanFile, MessagesNameTheField) {
    EXPECT_EQ(refusal(8, 2, CVML_ERR_LOGIC),
              "compiled plan: byte 8: format version 2.0; this build reads 1.x");
    EXPECT_EQ(refusal(10, 1, CVML_ERR_LOGIC),
              "compiled plan: byte 10: format version 1.1 is newer than this build's 1.0");
    EXPECT_EQ(refusal(0, 'X', CVML_ERR_LOGIC),
              "compiled plan: byte 0: not a compiled plan (no CVMC magic)");
    EXPECT_EQ(refusal(24, 9, CVML_ERR_LOGIC), "compiled plan: byte 24: unknown target family 9");
    EXPECT_EQ(refusal(25, 1, CVML_ERR_LOGIC),
              "compiled plan: byte 25: level 1 is not one of family 1");
    EXPECT_EQ(refusal(26, 0, CVML_ERR_LOGIC), "compiled plan: byte 26: 0 threads (1 to 256)");
    EXPECT_EQ(refusal(40, 1, CVML_ERR_LOGIC), "compiled plan: byte 40: reserved byte is not zero");
    // The CNST entry (the 12th) claims more bytes than the file has.
    const size_t cnst = PLAN_HEADER_SIZE + 11 * PLAN_ENTRY_SIZE;
    const std::string past = refusal(cnst + 11, 0x7f, CVML_ERR_LOGIC);
    EXPECT_EQ(
        past.find("compiled plan: byte " + std::to_string(cnst + 8) + ": section 11 (CNST): "), 0u)
        << past;
    EXPECT_NE(past.find("end past the file's"), std::string::npos) << past;

    Plan p = make_plan();
    p.bytes.push_back(0);
    plan_file f;
    EXPECT_EQ(plan_file_read(p.bytes.data(), p.bytes.size(), &f), CVML_ERR_LOGIC);
    EXPECT_NE(std::string(cvml_last_error()).find("(trailing bytes)"), std::string::npos);
}

TEST(PlanFile, TargetsThisBuildCannotRun) {
    const Plan m55 = make_plan({PLAN_FAMILY_CORTEXM, PLAN_LEVEL_CM_MVE, 1});
    plan_file f;
    ASSERT_EQ(plan_file_read(m55.bytes.data(), m55.bytes.size(), &f), CVML_ERR_RUNTIME);
    const std::string msg = cvml_last_error();
    EXPECT_EQ(msg.find("compiled plan: byte 24: plan for cortex-m55 (cm-mve); this build runs "),
              0u)
        << msg;
    // An x86 level: read where this CPU has it, refused where it does not.
    const Plan avx2 = make_plan({PLAN_FAMILY_X86_64, CPU_SIMD_AVX2, 2});
    // cpu_simd_detect() gives an x86 level only in an x86 build.
    const int best = cpu_simd_detect();
    const bool has = best == CPU_SIMD_AVX2 || best == CPU_SIMD_AVX512;
    EXPECT_EQ(plan_file_read(avx2.bytes.data(), avx2.bytes.size(), &f),
              has ? CVML_OK : CVML_ERR_RUNTIME)
        << cvml_last_error();
}

TEST(PlanFile, WriterRefusesWhatTheReaderWould) {
    const std::vector<uint8_t> g = payload(PLAN_GRPH, 129);
    const plan_target scalar = {PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR, 1};
    std::vector<uint8_t> out;
    const std::vector<plan_section_in> missing = {{PLAN_GRPH, g.data(), 128}};
    EXPECT_EQ(write(scalar, missing, &out), CVML_ERR_LOGIC);
    EXPECT_STREQ(cvml_last_error(), "compiled plan: no KERN section (required)");
    const std::vector<plan_section_in> partial = {{PLAN_GRPH, g.data(), 129}};
    EXPECT_EQ(write(scalar, partial, &out), CVML_ERR_LOGIC);
    EXPECT_STREQ(cvml_last_error(),
                 "compiled plan: section GRPH: 129 bytes is not whole 128-byte records");
    const std::vector<plan_section_in> order = {{PLAN_KERN, nullptr, 0},
                                                {PLAN_GRPH, g.data(), 128}};
    EXPECT_EQ(write(scalar, order, &out), CVML_ERR_LOGIC);
    EXPECT_STREQ(cvml_last_error(), "compiled plan: section 1: tag 0 out of the format's order");
    Plan p = make_plan();
    std::vector<plan_section_in> all;
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        all.push_back({t, p.payloads[static_cast<size_t>(t)].data(),
                       p.payloads[static_cast<size_t>(t)].size()});
    EXPECT_EQ(write({PLAN_FAMILY_X86_64, CPU_SIMD_SCALAR, 1}, all, &out), CVML_ERR_LOGIC);
    EXPECT_EQ(write({PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR, 0}, all, &out), CVML_ERR_LOGIC);
    size_t size = 0;
    ASSERT_EQ(plan_file_size(all.data(), PLAN_TAG_COUNT, &size), CVML_OK);
    out.assign(size + 1, 0);
    EXPECT_EQ(plan_file_write(&scalar, all.data(), PLAN_TAG_COUNT, out.data(), size + 1),
              CVML_ERR_LOGIC);
}

}  // namespace
