// Hostile files in the plugin path (issue 18): a FIFO, a directory, a truncated ELF, a
// declaration that is a 1-byte object or a function. cvml_init() must finish (an alarm
// fails the test instead of a hang) and record each as refused, with a message; and
// refused plugins must not use up the slots a good plugin needs.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "cvml.h"

namespace {

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f << bytes;
}

struct record {
    int loaded;
    std::string reason;
};

/* Plugin records by file name. */
std::map<std::string, record> records() {
    std::map<std::string, record> out;
    int count = 0;
    cvml_plugin_count(&count);
    for (int i = 0; i < count; ++i) {
        const char *name, *version, *path, *reason;
        int loaded = 0;
        if (cvml_plugin_info(i, &name, &version, &path, &loaded, &reason) != CVML_OK) continue;
        std::string p = path;
        out[p.substr(p.find_last_of('/') + 1)] = {loaded, reason};
    }
    return out;
}

class HostilePlugins : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/cvml_hostile_plugins_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        unsetenv("CVML_PLUGIN_PATH");
        std::string cmd = "rm -rf '" + dir_ + "'";
        ASSERT_EQ(system(cmd.c_str()), 0);
    }
    /* cvml_init under an alarm: a hang kills the test with SIGALRM. */
    void init_with(const std::string& path) {
        setenv("CVML_PLUGIN_PATH", path.c_str(), 1);
        alarm(30);
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        alarm(0);
    }
    std::string dir_;
};

}  // namespace

TEST_F(HostilePlugins, SpecialFilesAndBadDeclarationsAreRefusedWithAMessage) {
    ASSERT_EQ(mkfifo((dir_ + "/libcvml_fifo.so").c_str(), 0600), 0);
    ASSERT_EQ(mkdir((dir_ + "/libcvml_dir.so").c_str(), 0700), 0);
    std::string elf = read_all(CVML_DECL_BYTE_PLUGIN);
    ASSERT_GT(elf.size(), 256u);
    write_all(dir_ + "/libcvml_truncated.so", elf.substr(0, 200));
    write_all(dir_ + "/libcvml_declbyte.so", elf);
    write_all(dir_ + "/libcvml_declfunc.so", read_all(CVML_DECL_FUNCTION_PLUGIN));
    init_with(dir_);
    auto r = records();
    const std::map<std::string, std::string> expected = {
        {"libcvml_fifo.so", "not a regular file"},
        {"libcvml_dir.so", "not a regular file"},
        {"libcvml_truncated.so", "cannot open plugin"},
        {"libcvml_declbyte.so", "not a plugin declaration"},
        {"libcvml_declfunc.so", "not a plugin declaration"},
    };
    for (const auto& e : expected) {
        ASSERT_TRUE(r.count(e.first)) << e.first << " has no record";
        EXPECT_EQ(r[e.first].loaded, 0) << e.first;
        EXPECT_NE(r[e.first].reason.find(e.second), std::string::npos)
            << e.first << ": " << r[e.first].reason;
    }
    EXPECT_EQ(cvml_release(), CVML_OK);
}

TEST_F(HostilePlugins, RefusedPluginsLeaveRoomForAGoodOne) {
    std::string elf = read_all(CVML_DECL_BYTE_PLUGIN);
    for (int i = 0; i < 40; ++i) {
        char name[64];
        snprintf(name, sizeof name, "/libcvml_bad%02d.so", i);
        write_all(dir_ + name, elf.substr(0, 200));
    }
    std::string good_dir = dir_ + "/good";
    ASSERT_EQ(mkdir(good_dir.c_str(), 0700), 0);
    write_all(good_dir + "/libcvml_testplugin.so", read_all(CVML_GOOD_PLUGIN));
    init_with(dir_ + ":" + good_dir);
    auto r = records();
    ASSERT_TRUE(r.count("libcvml_testplugin.so"));
    EXPECT_EQ(r["libcvml_testplugin.so"].loaded, 1) << r["libcvml_testplugin.so"].reason;
    EXPECT_EQ(cvml_release(), CVML_OK);
}
