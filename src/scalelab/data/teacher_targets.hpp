// data/teacher_targets: training G2P on a teacher's pronunciations (sequence-level knowledge
// distillation, Kim & Rush 2016).
//
// A teacher (one model or an ensemble, `scalelab distill`) pronounces every training word; a
// student then trains on those outputs instead of, or beside, the dictionary's:
//   replace  the student's targets are the teacher's pronunciations only;
//   add      the dictionary's pronunciations, then each teacher pronunciation that differs from
//            all of them (a word the teacher gets right adds nothing).
// Only the training examples change. The words scored for WER/PER (train_words, valid, test) keep
// the dictionary's pronunciations.
//
// The teacher file is a dictionary (parse_cmudict: "WORD<TAB>P1 P2 ...", '#' comments) of training
// words: a held-out (valid or test) word in it is an Error, since training on it would leak the
// evaluation; so is a word of no split, a trained word it lacks, or a phone outside the phone
// vocabulary. Errors name the file and the first offending word. Training words outside the
// trained subset (data.max_train_words) are skipped.
#pragma once
#include <string>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/vocab.hpp"

namespace scalelab {

enum class TeacherMix { replace, add };
TeacherMix parse_teacher_mix(const std::string& name);  // "replace" | "add"; else Error

struct TeacherTargets {
  std::string source;                    // file name, for messages
  std::vector<CmudictEntry> entries;     // sorted by word (as parse_cmudict returns them)
};

// Reads and parses the file; an Error names it if it is missing, unreadable, has a line that
// could not be parsed or holds no entry.
TeacherTargets load_teacher_targets(const std::string& path);

// `trained` (sorted by word; the training side or a subset of it) with the teacher's
// pronunciations mixed in as `mix` says, one entry per trained entry, in order. `all_train` is
// the whole training side and `held_out` every valid and test entry (any order), for the checks;
// every phone must be in `phones`.
std::vector<CmudictEntry> apply_teacher_targets(const std::vector<CmudictEntry>& trained,
                                                const std::vector<CmudictEntry>& all_train,
                                                const std::vector<CmudictEntry>& held_out,
                                                const TeacherTargets& teacher, TeacherMix mix,
                                                const Vocab& phones);

// Dictionary text in the g014b2b format: "WORD<TAB>P1 P2 ..." per pronunciation, words upper
// case, after `comment` lines prefixed with "# " (parse_cmudict reads it back to the same entries).
std::string format_dictionary(const std::vector<CmudictEntry>& entries,
                              const std::vector<std::string>& comment = {});

}  // namespace scalelab
