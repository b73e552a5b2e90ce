#include "base/glob.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace bisectd;

TEST_CASE("base::glob_match on metric names", "[base][glob]") {
  CHECK(base::glob_match("proc-vmstat.*", "proc-vmstat.pgfault"));
  CHECK(base::glob_match("proc-vmstat.*", "proc-vmstat."));
  CHECK_FALSE(base::glob_match("proc-vmstat.*", "vmstat.cpu.us"));
  CHECK_FALSE(base::glob_match("vmstat.*", "proc-vmstat.pgfault")); // the whole name, not a part
  CHECK(base::glob_match("*vmstat.*", "proc-vmstat.pgfault"));
  CHECK(base::glob_match("time.*_time", "time.elapsed_time"));
  CHECK_FALSE(base::glob_match("time.*_time", "time.elapsed_time_max"));
  CHECK(base::glob_match("vmstat.cpu.??", "vmstat.cpu.us"));
  CHECK_FALSE(base::glob_match("vmstat.cpu.??", "vmstat.cpu.u"));
  CHECK(base::glob_match("vmstat.cpu.[us]?", "vmstat.cpu.sy"));
  CHECK_FALSE(base::glob_match("vmstat.cpu.[!us]?", "vmstat.cpu.sy"));
  CHECK(base::glob_match("vmstat.cpu.[!us]?", "vmstat.cpu.id"));
  CHECK(base::glob_match("interrupts.[0-9]*", "interrupts.24:PCI-MSI"));
  CHECK_FALSE(base::glob_match("interrupts.[0-9]*", "interrupts.LOC"));
  CHECK(base::glob_match("a\\*b", "a*b"));
  CHECK_FALSE(base::glob_match("a\\*b", "axb"));
  CHECK(base::glob_match("[]]", "]"));
  CHECK(base::glob_match("bench.ops_per_sec", "bench.ops_per_sec"));
  CHECK(base::glob_match("*", ""));
  CHECK(base::glob_match("**a**b**", "xxaxxbxx"));
  // A pathological pattern stays fast (no exponential backtracking).
  CHECK_FALSE(base::glob_match("*a*a*a*a*a*a*a*a*b", std::string(2000, 'a')));
}

TEST_CASE("base::glob_error names what is wrong", "[base][glob]") {
  CHECK_FALSE(base::glob_error("proc-vmstat.*"));
  CHECK_FALSE(base::glob_error("[a-z]*"));
  CHECK(base::glob_error("").value().find("empty") != std::string::npos);
  CHECK(base::glob_error("proc-[vmstat").value().find("position 6") != std::string::npos);
  CHECK(base::glob_error("x[]").value().find("'['") != std::string::npos);
  CHECK(base::glob_error("x[!]").value().find("'['") != std::string::npos);
  CHECK(base::glob_error("x\\").value().find("trailing") != std::string::npos);
  CHECK(base::glob_error("x\ny").value().find("control character at position 2") != std::string::npos);
  CHECK(base::glob_error(std::string(300, 'x')).value().find("256") != std::string::npos);
  CHECK_FALSE(base::glob_match("proc-[vmstat", "proc-[vmstat")); // a refused pattern matches nothing
}
