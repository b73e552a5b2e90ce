#include "lab/initramfs.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace bisectd;

namespace {

struct ParsedEntry {
  std::string name;
  unsigned mode = 0;
  std::string data;
};

unsigned hex_field(const std::string& archive, std::size_t offset, int index) {
  return static_cast<unsigned>(std::stoul(archive.substr(offset + 6 + 8 * index, 8), nullptr, 16));
}

std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// A minimal newc reader: checks magic and alignment as the kernel's unpacker needs them.
std::vector<ParsedEntry> parse_newc(const std::string& archive) {
  std::vector<ParsedEntry> entries;
  std::size_t at = 0;
  while (true) {
    REQUIRE(at % 4 == 0);
    REQUIRE(archive.compare(at, 6, "070701") == 0);
    ParsedEntry entry;
    entry.mode = hex_field(archive, at, 1);
    auto size = hex_field(archive, at, 6);
    auto name_size = hex_field(archive, at, 11);
    entry.name = archive.substr(at + 110, name_size - 1);
    REQUIRE(archive[at + 110 + name_size - 1] == '\0');
    auto data_at = align4(at + 110 + name_size);
    entry.data = archive.substr(data_at, size);
    at = align4(data_at + size);
    if (entry.name == "TRAILER!!!") {
      CHECK(at == archive.size());
      return entries;
    }
    entries.push_back(entry);
  }
}

} // namespace

TEST_CASE("lab::make_cpio writes a newc archive the kernel can unpack", "[kernel]") {
  using Kind = lab::CpioEntry::Kind;
  auto archive = lab::make_cpio({{"bin", Kind::directory, 0755, ""},
                                 {"bin/busybox", Kind::file, 0755, "ELF..."},
                                 {"bin/sh", Kind::symlink, 0777, "busybox"},
                                 {"init", Kind::file, 0755, "#!/bin/sh\n"}});
  auto entries = parse_newc(archive);
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].name == "bin");
  CHECK(entries[0].mode == 040755);
  CHECK(entries[1].mode == 0100755);
  CHECK(entries[1].data == "ELF...");
  CHECK(entries[2].mode == 0120777);
  CHECK(entries[2].data == "busybox");
  CHECK(entries[3].data == "#!/bin/sh\n");
  CHECK(lab::make_cpio({}) == lab::make_cpio({})); // deterministic (no mtimes)
}

TEST_CASE("lab::base_entries holds init, busybox, sh and the programs", "[kernel]") {
  test::TempDir tmp;
  lab::InitramfsInputs inputs;
  inputs.busybox = tmp.write("busybox", "BB");
  inputs.programs = {tmp.write("bench/page_fault", "PF"), tmp.write("bench/syscall", "SC")};
  auto entries = lab::base_entries(inputs);
  REQUIRE(entries);
  std::map<std::string, lab::CpioEntry> by_path;
  for (const auto& entry : *entries) {
    by_path[entry.path] = entry;
  }
  CHECK(by_path.at("init").data == lab::init_script());
  CHECK(by_path.at("init").mode == 0755);
  CHECK(by_path.at("bin/busybox").data == "BB");
  CHECK(by_path.at("bin/sh").kind == lab::CpioEntry::Kind::symlink);
  CHECK(by_path.at("usr/local/bin/page_fault").data == "PF");
  CHECK(by_path.at("usr/local/bin/syscall").mode == 0755);
  for (const char* dir : {"proc", "sys", "dev", "tmp", "bisectd"}) {
    CHECK(by_path.at(dir).kind == lab::CpioEntry::Kind::directory);
  }
  inputs.busybox = tmp.path() / "missing";
  CHECK_FALSE(lab::base_entries(inputs));
}

TEST_CASE("lab::job_entries carries argv as data, one argument per line", "[kernel]") {
  lab::RunSpec run;
  run.command = {"page_fault", "--seconds", "2", "$(reboot -f); echo 'x'"};
  run.env = {{"LANG", "C"}};
  run.timeout = std::chrono::seconds(90);
  auto entries = lab::job_entries(run, 3);
  REQUIRE(entries);
  REQUIRE(entries->size() == 5);
  CHECK((*entries)[0].path == "bisectd/argv");
  CHECK((*entries)[0].data == "page_fault\n--seconds\n2\n$(reboot -f); echo 'x'\n");
  CHECK((*entries)[1].data == "LANG=C\n");
  CHECK((*entries)[2].data == "3\n");
  CHECK((*entries)[3].data == "90\n");
  CHECK((*entries)[4].path == "bisectd/proc");
  CHECK((*entries)[4].data.empty()); // no monitors: /init prints no /proc snapshot

  SECTION("the /proc files of the run's monitors, one a line") {
    run.monitors = {"proc-vmstat", "meminfo", "time"};
    auto with_monitors = lab::job_entries(run, 1);
    REQUIRE(with_monitors);
    CHECK((*with_monitors)[4].data == "meminfo\nvmstat\n"); // time has no /proc file: the guest has no rusage
  }

  SECTION("rejected inputs") {
    run.command = {"bench", "two\nlines"};
    CHECK_FALSE(lab::job_entries(run, 1));
    run.command = {};
    CHECK_FALSE(lab::job_entries(run, 1));
    run.command = {"bench"};
    CHECK_FALSE(lab::job_entries(run, 0));
    run.env = {{"BAD NAME", "x"}};
    CHECK_FALSE(lab::job_entries(run, 1));
  }
}

TEST_CASE("lab::init_script reads the job without evaluating it", "[kernel]") {
  auto script = lab::init_script();
  CHECK(script.starts_with("#!/bin/sh\n"));
  CHECK(script.find("read -r arg; do set -- \"$@\" \"$arg\"; done < /bisectd/argv") != std::string::npos);
  CHECK(script.find("eval") == std::string::npos);
  CHECK(script.find("echo \"BISECTD-BOOT release=$(uname -r)\"") != std::string::npos);
  CHECK(script.find("reboot -f") != std::string::npos);
  // The snapshots are outside the timed part: before `start=` and after `end=`.
  auto before = script.find("snapshot before"), start = script.find("start=$(cut"), end = script.find("end=$(cut"),
       after = script.find("snapshot after");
  CHECK(before < start);
  CHECK(end < after);
  CHECK(after != std::string::npos);
}

TEST_CASE("lab::cached_base_image is made once and gunzips to the archive", "[kernel]") {
  test::TempDir tmp;
  lab::InitramfsInputs inputs;
  inputs.busybox = tmp.write("busybox", "BB");
  auto first = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(first);
  auto again = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(again);
  CHECK(*first == *again);
  auto gz = base::read_file(*first);
  REQUIRE(gz);
  CHECK(gz->substr(0, 2) == "\x1f\x8b");
  inputs.busybox = tmp.write("busybox2", "BB2");
  auto other = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(other);
  CHECK(*other != *first);
}
