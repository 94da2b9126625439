// The report's surfaces with hostile input (docs/robustness.md, "Report surfaces"): each escaping
// function on hostile strings, a ledger whose strings try command substitution in gnuplot and live
// Markdown, log axes at the ends of the double range, an SVG that tries to run or fetch something,
// FIFOs where JSON is expected, a gnuplot that never returns, and a stop while drawing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "scalelab/core/error.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/ledger_files.hpp"
#include "scalelab/report/svg_inline.hpp"
#include "scalelab/report/text.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// The strings every escaping function is tried on: backquotes, $(...), @macros, quotes, newlines,
// <, $, NUL, a terminal escape, invalid UTF-8 (a lone continuation byte, a truncated sequence, an
// overlong '/', a surrogate), Markdown link / image / HTML, block syntax at the start.
const std::vector<std::string>& hostile_strings() {
  static const std::vector<std::string> all = {
      "step `id > /tmp/scalelab-x`",
      "$(touch /tmp/scalelab-x) @macro",
      "it's \"quoted\" \\ back\\slash",
      "line one\nline two\r\n\n# heading",
      "<script>alert(1)</script> & <img src=x onerror=alert(1)>",
      std::string("nul\0inside", 10),
      "\x1b[31mred\x1b[0m",
      "bad \x80 \xE2\x82 \xC0\xAF \xED\xA0\x80 end",
      "[click](javascript:alert(1)) ![x](https://evil.example/x.png) <https://evil.example>",
      "www.evil.example and mail@evil.example",
      "- item\n1. first\n> quote\n    code\n| a | b |",
      "*emph* _u_ **strong** ~~del~~ `code` $x^2$",
      "12. list",
      "   # indented heading",
      "}{'\";)|&!",
  };
  return all;
}

bool valid_utf8_text(const std::string& s) { return valid_utf8(s) == s; }

// Runs fn in a child process; false if it did not return within seconds (the child is killed)
// or failed. Guards the tests of code that used to loop forever or block.
bool finishes_within(double seconds, const std::function<void()>& fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      fn();
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(seconds)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

fs::path scratch_root() {
  return fs::temp_directory_path() / ("scalelab-surfaces-test-" + std::to_string(::getpid()));
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_root()); }
};
const auto* const cleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

fs::path scratch(const std::string& name) {
  const fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path fixture_ledger() {
  if (const char* source = std::getenv("SCALELAB_SOURCE")) return fs::path(source) / "tests/report/fixtures/ledger";
  return fs::path(SCALELAB_TEST_SOURCE_DIR) / "tests/report/fixtures/ledger";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

Json read_json(const fs::path& p) { return Json::parse(read(p)); }
void write_json(const fs::path& p, const Json& j) { write(p, j.dump(2)); }

// A copy of the fixture ledger whose every plot string would run `touch <marker>` if it reached
// gnuplot unescaped, and whose arm names, statement and experiment try live Markdown.
fs::path hostile_ledger(const std::string& name, const fs::path& marker) {
  const fs::path dir = scratch(name);
  fs::remove_all(dir);
  fs::copy(fixture_ledger(), dir, fs::copy_options::recursive);
  const std::string m = marker.string();
  const std::string cmd = "x `touch " + m + "` $(touch " + m + ") @pwn '\" \\`touch " + m + "`";
  Json e4 = read_json(dir / "claims/E4.json");
  e4["plots"][0]["x_label"] = "d_model " + cmd;
  e4["plots"][0]["y_label"] = "\"; system(\"touch " + m + "\"); \"" + cmd;
  e4["plots"][0]["title"] = "title " + cmd;
  e4["plots"][0]["series"][0]["label"] = "series\n!touch " + m + "\n" + cmd;
  e4["arms"][0]["name"] = "arm\n\n[click](javascript:alert(1)) ![img](https://evil.example/x.png)\n\n<script>alert(1)</script>";
  e4["experiment"] = "# heading\n\n- list <img src=x onerror=alert(1)> `code` " + cmd;
  write_json(dir / "claims/E4.json", e4);
  Json a4 = read_json(dir / "claims/A4.json");
  a4["plots"][0]["cols"][0] = "col " + cmd;
  a4["plots"][0]["series"][1]["label"] = "bar " + cmd;
  write_json(dir / "claims/A4.json", a4);
  Json e6 = read_json(dir / "claims/E6.json");
  e6["plots"][0]["cols"][1] = "heat col " + cmd;
  e6["plots"][0]["rows"][0] = "heat row " + cmd;
  write_json(dir / "claims/E6.json", e6);
  return dir;
}

// ---- the escaping functions on hostile strings ----

TEST(ReportEscaping, GnuplotStringsAreSingleQuotedWithNothingToSubstitute) {
  for (const std::string& s : hostile_strings()) {
    const std::string g = gnuplot_string(s);
    ASSERT_GE(g.size(), 2u);
    EXPECT_EQ(g.front(), '\'');
    EXPECT_EQ(g.back(), '\'');
    // Inside: every quote doubled, so the literal never ends early; no line break, no NUL.
    const std::string inner = g.substr(1, g.size() - 2);
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '\'') {
        ASSERT_TRUE(i + 1 < inner.size() && inner[i + 1] == '\'') << g;
        ++i;
      }
    }
    EXPECT_EQ(g.find_first_of(std::string("\n\r\0", 3)), std::string::npos) << g;
    EXPECT_TRUE(valid_utf8_text(g)) << g;
  }
  EXPECT_EQ(gnuplot_string("it's"), "'it''s'");
  EXPECT_EQ(gnuplot_string("a\nb"), "'a b'");
  EXPECT_EQ(gnuplot_string("`id`"), "'`id`'");  // kept as text: single quotes substitute nothing
  EXPECT_EQ(gnuplot_string(std::string("a\0b", 3)), "'ab'");
  EXPECT_EQ(gnuplot_string("\xff"), "'\xEF\xBF\xBD'");
}

// Everything Markdown or HTML could read as syntax, outside numeric character references.
void expect_no_markdown_syntax(const std::string& escaped, const std::string& raw) {
  const std::string plain = std::regex_replace(escaped, std::regex("&#[0-9]+;"), "");
  EXPECT_EQ(plain.find_first_of(std::string("\\`*~[]<>&|\"$@\n\r\t\0", 17)), std::string::npos)
      << "raw: " << raw << "\nescaped: " << escaped;
  EXPECT_FALSE(std::regex_search(plain, std::regex("(^|[^A-Za-z0-9])_|_([^A-Za-z0-9]|$)"))) << escaped;
  EXPECT_FALSE(std::regex_search(plain, std::regex("www\\.|://|mailto:|xmpp:", std::regex::icase))) << escaped;
  EXPECT_TRUE(valid_utf8_text(escaped)) << escaped;
  // Nothing at the start that opens a block: heading, list, quote, indented code.
  ASSERT_FALSE(escaped.empty());
  EXPECT_FALSE(std::regex_search(escaped, std::regex("^ {0,3}[#+=>-]"))) << escaped;
  EXPECT_FALSE(std::regex_search(escaped, std::regex("^ {4}"))) << escaped;
  EXPECT_FALSE(std::regex_search(escaped, std::regex("^ {0,3}[0-9]+[.)]( |$)"))) << escaped;
}

TEST(ReportEscaping, MarkdownTextHasNoSyntaxLeft) {
  for (const std::string& s : hostile_strings()) expect_no_markdown_syntax(escape_markdown(s), s);
  EXPECT_EQ(escape_markdown("<b>"), "&#60;b&#62;");
  EXPECT_EQ(escape_markdown("a\nb"), "a b");
  EXPECT_EQ(escape_markdown("1.5 and 2"), "1.5 and 2");  // numbers stay readable
  EXPECT_EQ(escape_markdown("12. x"), "12&#46; x");
  EXPECT_EQ(escape_markdown("N(0,1/d) x sqrt(d_model): it's"), "N(0,1/d) x sqrt(d_model): it's");
  EXPECT_EQ(escape_markdown("_x_ https://a"), "&#95;x&#95; https&#58;//a");
  EXPECT_EQ(escape_markdown("    code"), "&#32;   code");
  EXPECT_EQ(escape_markdown("[a](b)"), "&#91;a&#93;(b)");
}

TEST(ReportEscaping, HtmlTextHasNoMarkupLeft) {
  for (const std::string& s : hostile_strings()) {
    const std::string e = escape_html(s);
    EXPECT_EQ(e.find_first_of(std::string("<>\"'\0", 5)), std::string::npos) << e;
    EXPECT_TRUE(std::regex_match(e, std::regex("([^&]|&(amp|lt|gt|quot|#39);)*"))) << e;
    EXPECT_TRUE(valid_utf8_text(e)) << e;
    EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  }
}


// ---- finding 1: no command runs from a ledger ----

TEST(ReportSurfaces, HostileLabelsRunNoCommandAndAreDrawnAsText) {
  if (!gnuplot_works("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path marker = scratch_root() / "command-ran";
  const fs::path dir = hostile_ledger("hostile-gnuplot", marker);
  const ReportResult r = write_report(dir.string(), ReportOptions{});
  EXPECT_FALSE(fs::exists(marker)) << "a command in a label ran";
  EXPECT_EQ(r.plots_drawn, 3);
  EXPECT_EQ(r.plots_failed, 0);
  // The label is in the plot as text (gnuplot escapes it for XML).
  EXPECT_NE(read(dir / "plots/E4-ratio.svg").find("d_model x `touch "), std::string::npos);
  const std::string html = read(dir / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
}

TEST(ReportSurfaces, ScriptsHoldNoSubstitutionOutsideSingleQuotes) {
  PlotSpec p;
  p.id = "t";
  p.kind = "bars";
  p.x_label = "`touch /tmp/x`";
  p.cols = {"a`b`", "c'd", "e\nf"};
  p.series = {{"s\"`x`", {{0, 1}, {1, 2}, {2, 3}}}};
  const std::string script = gnuplot_script(p, "/data'dir", "/out/`x`.svg");
  for (std::istringstream in(script); !in.eof();) {
    std::string line;
    std::getline(in, line);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\'') {
        if (quoted && i + 1 < line.size() && line[i + 1] == '\'') ++i;
        else quoted = !quoted;
      } else if (!quoted) {
        EXPECT_EQ(std::string("`\"@!;#").find(line[i]), std::string::npos) << line;
      }
    }
    EXPECT_FALSE(quoted) << "a string runs past the end of the line: " << line;
  }
}

// ---- finding 3: log axes at the ends of the double range ----

TEST(ReportSurfaces, LogAxesOfHugeOrDenormalValuesFinish) {
  for (double v : {1e308, 1.7e308, 5e-324, 1e-310, 2.2e-308}) {
    PlotSpec p;
    p.id = "t";
    p.kind = "lines";
    p.log_x = p.log_y = true;
    p.series = {{"s", {{v, v}, {v, v, v, v}}}};
    EXPECT_TRUE(finishes_within(10, [&] { gnuplot_script(p, "/d", "/o.svg"); })) << v;
    p.series = {{"s", {{v, v}, {v * 0.5, v * 0.7}}}};
    EXPECT_TRUE(finishes_within(10, [&] { gnuplot_script(p, "/d", "/o.svg"); })) << v;
  }
}

// ---- finding 4: a gnuplot that never returns; a stop while drawing ----

// A "gnuplot" that answers --version and then hangs while drawing; it writes its pid to pid_file.
fs::path hanging_gnuplot(const fs::path& dir, const fs::path& pid_file) {
  const fs::path program = dir / "hang-gnuplot";
  write(program, "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'gnuplot 5.4 (hangs)'; exit 0; }\necho $$ > '" +
                     pid_file.string() + "'\nexec sleep 1000\n");
  fs::permissions(program, fs::perms::owner_all);
  return program;
}

PlotSpec small_lines() {
  PlotSpec p;
  p.id = "t";
  p.kind = "lines";
  p.series = {{"s", {{1, 1}, {2, 2}}}};
  return p;
}

bool alive(const fs::path& pid_file) {
  const std::string text = read(pid_file);
  if (text.empty()) return false;
  return kill(std::stoi(text), 0) == 0;
}

TEST(ReportSurfaces, AHangingGnuplotIsKilledAfterThePlotTimeout) {
  const fs::path dir = scratch("hang");
  const fs::path program = hanging_gnuplot(dir, dir / "pid");
  const auto start = std::chrono::steady_clock::now();
  const PlotResult r = draw_plot(small_lines(), program.string(), {0.5, nullptr});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problem.find("did not finish within 0.5 s (killed)"), std::string::npos) << r.problem;
  EXPECT_FALSE(alive(dir / "pid")) << "the hanging child outlived its timeout";
}

TEST(ReportSurfaces, TheReportHasOneDeadlineForAllItsPlots) {
  const fs::path dir = scratch("deadline");
  fs::copy(fixture_ledger(), dir / "ledger", fs::copy_options::recursive);
  ReportOptions o;
  o.gnuplot = hanging_gnuplot(dir, dir / "pid").string();
  o.plot_timeout_seconds = 30;
  o.plots_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  const ReportResult r = write_report((dir / "ledger").string(), o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  EXPECT_EQ(r.plots_drawn, 0);
  EXPECT_EQ(r.plots_timed_out, 3);
  const std::string html = read(dir / "ledger/report.html");
  EXPECT_NE(html.find("did not finish within "), std::string::npos);  // the first, stopped at the deadline
  EXPECT_NE(html.find("not started: the plots had taken the report&#39;s limit of 1 s"), std::string::npos);
}

TEST(ReportSurfaces, AStopKillsGnuplotRemovesItsTemporaryDirectoryAndWritesNothing) {
  const fs::path dir = scratch("stop");
  fs::copy(fixture_ledger(), dir / "ledger", fs::copy_options::recursive);
  fs::create_directories(dir / "tmp");
  const std::string before = read(dir / "ledger/ledger.json");
  volatile std::sig_atomic_t stop = 0;
  ReportOptions o;
  o.gnuplot = hanging_gnuplot(dir, dir / "pid").string();
  o.stop = &stop;
  std::thread signal_later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    stop = SIGTERM;
  });
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved = old_tmp ? old_tmp : "";
  setenv("TMPDIR", (dir / "tmp").c_str(), 1);
  try {
    write_report((dir / "ledger").string(), o);
    ADD_FAILURE() << "no ReportStopped";
  } catch (const ReportStopped& e) {
    EXPECT_EQ(e.signal, SIGTERM);
  }
  if (old_tmp) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  signal_later.join();
  EXPECT_TRUE(fs::is_empty(dir / "tmp")) << "the plot's temporary directory was left behind";
  EXPECT_FALSE(alive(dir / "pid")) << "gnuplot outlived the stop";
  EXPECT_FALSE(fs::exists(dir / "ledger/report.html"));
  EXPECT_FALSE(fs::exists(dir / "ledger/report.md"));
  EXPECT_FALSE(fs::exists(dir / "ledger/plots"));
  EXPECT_EQ(read(dir / "ledger/ledger.json"), before);
}

// ---- finding 6: a gnuplot asked for by name must work ----

std::string check_gnuplot_error(const std::string& program) {
  try {
    check_gnuplot(program);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ReportSurfaces, CheckGnuplotRefusesWhatCannotBeGnuplot) {
  const fs::path dir = scratch("check-gnuplot");
  EXPECT_NE(check_gnuplot_error((dir / "missing").string()).find(": no such file"), std::string::npos);
  EXPECT_NE(check_gnuplot_error(dir.string()).find(": is a directory, not a program"), std::string::npos);
  EXPECT_NE(check_gnuplot_error("/bin/false").find("'--version' exited with status 1"), std::string::npos);
  EXPECT_NE(check_gnuplot_error("/bin/true").find("not gnuplot's version line"), std::string::npos);
  EXPECT_NE(check_gnuplot_error("").find("empty"), std::string::npos);
  EXPECT_NE(check_gnuplot_error("no-such-gnuplot-for-scalelab").find("not found in PATH"), std::string::npos);
  write(dir / "text", "not a program");
  EXPECT_NE(check_gnuplot_error((dir / "text").string()).find("not executable"), std::string::npos);
  if (gnuplot_works("gnuplot")) {
    EXPECT_EQ(check_gnuplot_error("gnuplot"), "");
  }
}

// ---- finding 7: no live Markdown from a ledger ----

TEST(ReportSurfaces, HostileStringsMakeNoLiveMarkdown) {
  const fs::path marker = scratch_root() / "md-marker";
  const fs::path dir = hostile_ledger("hostile-markdown", marker);
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  write_report(dir.string(), o);
  const std::string md = read(dir / "report.md");
  // A link or image needs a raw [ ... ]( and an autolink a raw scheme; the words may stay as text.
  for (const char* live : {"[click](", "](javascript:", "![img]", "<script", "<img", "https://evil", "\n# heading",
                           "\n- list"})
    EXPECT_EQ(md.find(live), std::string::npos) << live;
  // The arm's <details> summary stays on its line, so the raw HTML block is not ended early.
  const size_t at = md.find("<details><summary>Resolved config of arm &#34;arm");
  ASSERT_NE(at, std::string::npos);
  const std::string line = md.substr(at, md.find('\n', at) - at);
  EXPECT_NE(line.find("</summary>"), std::string::npos) << line;
  const std::string html = read(dir / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
}

// ---- finding 11: SVG from gnuplot is sanitised; FIFOs are not read ----

TEST(ReportSurfaces, InlinedSvgKeepsNothingThatRunsOrFetches) {
  const std::string svg =
      "<?xml version='1.0'?><svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)' ONCLICK=\"x()\">"
      "<g id='a' onmouseover=alert(2)><path d='M0,0' fill='url(#a)' style='fill:url(http://evil/x)'/></g>"
      "<foreignObject><body xmlns='http://www.w3.org/1999/xhtml'><script>alert(3)</script></body></foreignObject>"
      "<a href='javascript:alert(4)'><text>x</text></a><use xlink:href='data:image/svg+xml;base64,AAAA'/>"
      "<use href='https://evil/x.svg#y'/><use xlink:href='#a'/><image href='http://evil/x.png'/>"
      "<animate attributeName='href' to='javascript:alert(5)'/><set attributeName='onload' to='alert(6)'/>"
      "<style>@import url(http://evil/x.css);</style><script><![CDATA[alert(7)]]></script>"
      "<rect x\"onload='alert(8)' width='1'/><text>a &lt; b</text></svg>";
  const std::string out = inline_svg(svg, "p0-", "t");
  EXPECT_FALSE(std::regex_search(out, std::regex("[\\s/\"']on[a-z]+\\s*=", std::regex::icase))) << out;
  for (const char* bad : {"foreignObject", "script", "javascript", "data:", "http://evil", "https://evil", "<a ",
                          "<image", "<animate", "<set", "<style", "CDATA", "alert"})
    EXPECT_EQ(out.find(bad), std::string::npos) << bad << " in " << out;
  EXPECT_NE(out.find("id=\"p0-a\""), std::string::npos) << out;
  EXPECT_NE(out.find("xlink:href=\"#p0-a\""), std::string::npos) << out;
  EXPECT_NE(out.find("<text>a &lt; b</text>"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 6), "</svg>");
}

TEST(ReportSurfaces, FifosAreRefusedNotRead) {
  const fs::path dir = scratch("fifo");
  fs::copy(fixture_ledger(), dir / "ledger", fs::copy_options::recursive);
  fs::remove(dir / "ledger/claims/E6.json");
  ASSERT_EQ(mkfifo((dir / "ledger/claims/E6.json").c_str(), 0600), 0);
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  EXPECT_TRUE(finishes_within(10, [&] {
    try {
      write_report((dir / "ledger").string(), o);
    } catch (const Error& e) {
      if (std::string(e.what()).find("E6.json': is not a regular file (a FIFO); not read") != std::string::npos) return;
      throw;
    }
    throw std::runtime_error("no error");
  }));
  fs::remove(dir / "ledger/ledger.json");
  ASSERT_EQ(mkfifo((dir / "ledger/ledger.json").c_str(), 0600), 0);
  EXPECT_TRUE(finishes_within(10, [&] {
    try {
      read_ledger((dir / "ledger").string());
    } catch (const Error& e) {
      if (std::string(e.what()).find("ledger.json': is not a regular file (a FIFO)") != std::string::npos) return;
      throw;
    }
    throw std::runtime_error("no error");
  }));
}

TEST(ReportSurfaces, OutputsThatCannotBeWrittenAreRefusedBeforeDrawing) {
  const fs::path dir = scratch("outputs");
  fs::copy(fixture_ledger(), dir / "ledger", fs::copy_options::recursive);
  fs::create_directories(dir / "ledger/report.html");
  ReportOptions o;
  o.gnuplot = hanging_gnuplot(dir, dir / "pid").string();  // would take 60 s per plot if reached
  const auto start = std::chrono::steady_clock::now();
  try {
    write_report((dir / "ledger").string(), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("report.html': exists and is not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  EXPECT_FALSE(fs::exists(dir / "ledger/report.md"));
}

TEST(ReportSurfaces, ErrorMessagesQuoteFileBytesSafely) {
  const fs::path dir = scratch("messages");
  fs::copy(fixture_ledger(), dir / "ledger", fs::copy_options::recursive);
  Json e6 = read_json(dir / "ledger/claims/E6.json");
  e6["verdict"] = "\x1b]0;owned\x07" + std::string(5000, 'v');
  write_json(dir / "ledger/claims/E6.json", e6);
  try {
    read_ledger((dir / "ledger").string());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
    EXPECT_NE(what.find("\\x1b]0;owned\\x07"), std::string::npos) << what;
    EXPECT_LT(what.size(), 600u);
  }
}

TEST(ReportEscaping, MessagesUseTheOneQuotingFunctionAndLinksAreEncoded) {
  // What the report prints of a file's bytes goes through core/quote (its own tests: quote_test).
  for (const std::string& s : hostile_strings()) {
    const std::string q = scalelab::quote_for_message(s);
    for (char c : q) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << q;
    EXPECT_TRUE(valid_utf8_text(q)) << q;
  }
  EXPECT_EQ(markdown_href("#claim-E4"), "#claim-E4");
  EXPECT_EQ(markdown_href("javascript:alert(1)"), "javascript%3Aalert%281%29");
}

}  // namespace
}  // namespace scalelab::report
