#include "scalelab/data/teacher_targets.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <unordered_set>

#include "scalelab/core/error.hpp"

namespace scalelab {

TeacherMix parse_teacher_mix(const std::string& name) {
  if (name == "replace") return TeacherMix::replace;
  if (name == "add") return TeacherMix::add;
  throw_error("teacher mix '", name, "': expected replace or add");
}

TeacherTargets load_teacher_targets(const std::string& path) {
  SL_CHECK(!std::filesystem::is_directory(path), "teacher targets '", path,
           "' is a directory, expected a dictionary file (written by scalelab distill)");
  SL_CHECK(std::filesystem::exists(path), "teacher targets '", path,
           "' not found (write it with scalelab distill)");
  Cmudict dict = read_whole_dictionary(path, "teacher targets");
  return {path, std::move(dict.entries)};
}

std::vector<CmudictEntry> apply_teacher_targets(const std::vector<CmudictEntry>& trained,
                                                const std::vector<CmudictEntry>& all_train,
                                                const std::vector<CmudictEntry>& held_out,
                                                const TeacherTargets& teacher, TeacherMix mix,
                                                const Vocab& phones) {
  std::unordered_set<std::string> training_words, held_out_words;
  for (const CmudictEntry& e : all_train) training_words.insert(e.word);
  for (const CmudictEntry& e : held_out) held_out_words.insert(e.word);
  for (const CmudictEntry& e : teacher.entries) {
    SL_CHECK(!held_out_words.count(e.word), "teacher targets '", teacher.source, "': '", e.word,
             "' is a held-out (valid or test) word: training on it would leak the evaluation");
    SL_CHECK(training_words.count(e.word), "teacher targets '", teacher.source, "': '", e.word,
             "' is not a training word of this data split");
    for (const Pronunciation& p : e.pronunciations)
      for (const std::string& phone : p)
        SL_CHECK(phones.contains(phone), "teacher targets '", teacher.source, "': word '", e.word,
                 "' has the phone '", phone, "', not in the phone vocabulary");
  }
  // Both lists are sorted by word: one merge pass pairs each trained word with its teacher entry.
  std::vector<CmudictEntry> out;
  out.reserve(trained.size());
  size_t j = 0;
  for (const CmudictEntry& entry : trained) {
    while (j < teacher.entries.size() && teacher.entries[j].word < entry.word) ++j;
    SL_CHECK(j < teacher.entries.size() && teacher.entries[j].word == entry.word,
             "teacher targets '", teacher.source, "' lack the training word '", entry.word,
             "' (they must pronounce every trained word: scalelab distill writes them)");
    CmudictEntry mixed{entry.word, mix == TeacherMix::add ? entry.pronunciations
                                                          : std::vector<Pronunciation>{}};
    for (const Pronunciation& p : teacher.entries[j].pronunciations)
      if (std::find(mixed.pronunciations.begin(), mixed.pronunciations.end(), p) ==
          mixed.pronunciations.end())
        mixed.pronunciations.push_back(p);
    out.push_back(std::move(mixed));
  }
  return out;
}

std::string format_dictionary(const std::vector<CmudictEntry>& entries,
                              const std::vector<std::string>& comment) {
  std::string out;
  for (const std::string& line : comment) out += "# " + line + "\n";
  for (const CmudictEntry& e : entries) {
    std::string word = e.word;
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (const Pronunciation& p : e.pronunciations) {
      out += word;
      out += '\t';
      for (size_t i = 0; i < p.size(); ++i) {
        if (i) out += ' ';
        out += p[i];
      }
      out += '\n';
    }
  }
  return out;
}

}  // namespace scalelab
