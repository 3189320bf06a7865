// Damaged checkpoints are refused, never used: every single-bit flip and every truncation of a
// checkpoint the studio wrote is found before LibTorch reads a byte of it, by every function that
// loads one, with a message naming the file. The seal is an independently computed XXH3-128 of
// the bytes before it; files without a seal are checked record by record.

#include "dstudio/models/checkpoint_integrity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "dstudio/data/synthetic.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/training.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class CheckpointIntegrity : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    data::SyntheticSpec spec;
    spec.transitions = 2000;
    spec.seed = 5;
    dataset_ = new data::Dataset;
    dataset_->path = "tiny.hdf5";
    dataset_->env_id = "hopper";
    dataset_->data = data::make_synthetic(spec);
    dataset_->episodes = data::segment_episodes(dataset_->data.rewards, dataset_->data.terminals,
                                                dataset_->data.timeouts);
    data::state_statistics(dataset_->data, dataset_->episodes, dataset_->state_mean,
                           dataset_->state_std);
    dataset_->fingerprint = data::content_fingerprint(dataset_->data);
    auto variant = make_variant("dt");
    variant.hidden = 16;
    variant.layers = 1;
    variant.heads = 1;
    variant.context_length = 4;
    TrainingConfig training;
    training.steps = 4;
    training.batch_size = 4;
    training.log_every = 2;
    training.checkpoint_every = 0;
    Trainer trainer(*dataset_, variant, training, dir_->path() / "run");
    trainer.run();
    ASSERT_EQ(trainer.state(), TrainingState::Finished) << trainer.error();
    checkpoint_ = dir_->path() / "run" / "checkpoint.pt";
  }
  static void TearDownTestSuite() {
    delete dataset_;
    delete dir_;
  }

  static inline test::TempDir* dir_ = nullptr;
  static inline data::Dataset* dataset_ = nullptr;
  static inline std::filesystem::path checkpoint_;
};

TEST_F(CheckpointIntegrity, TheSealIsTheXxh3DigestOfEveryByteBeforeIt) {
  const std::string bytes = read_all(checkpoint_);
  const auto found = verify_checkpoint_file(checkpoint_);
  EXPECT_TRUE(found.sealed);
  EXPECT_EQ(found.bytes, bytes.size());
  EXPECT_GT(found.records, 3u);
  // The comment is "dstudio-xxh3-128 <32 hex digits>"; computed here with xxhash directly.
  const std::size_t seal = std::string("dstudio-xxh3-128 ").size() + 32;
  ASSERT_GT(bytes.size(), seal);
  EXPECT_EQ(bytes.substr(bytes.size() - seal, 17), "dstudio-xxh3-128 ");
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size() - seal);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  EXPECT_EQ(bytes.substr(bytes.size() - 32), hex);
  EXPECT_EQ(found.digest, hex);
  // The comment length in the end-of-directory record says the seal's length.
  const std::size_t eocd = bytes.size() - seal - 22;
  EXPECT_EQ(bytes.substr(eocd, 4), std::string("PK\x05\x06", 4));
  EXPECT_EQ(static_cast<unsigned char>(bytes[eocd + 20]) |
                (static_cast<unsigned char>(bytes[eocd + 21]) << 8),
            static_cast<int>(seal));
}

// Every position of the file's two ends (headers, the central directory, the seal) and hundreds
// of random positions in between; every truncation length class.
TEST_F(CheckpointIntegrity, EverySingleBitFlipAndTruncationIsRefusedNamingTheFile) {
  const std::string good = read_all(checkpoint_);
  const std::string where = "the/file.pt";
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < 600 && i < good.size(); ++i) positions.push_back(i);
  for (std::size_t i = good.size() > 2000 ? good.size() - 2000 : 0; i < good.size(); ++i)
    positions.push_back(i);
  std::mt19937_64 random(17);
  for (int k = 0; k < 1500; ++k) positions.push_back(random() % good.size());
  int refused = 0, cases = 0;
  for (const std::size_t at : positions) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (random() % 8)));
    ++cases;
    try {
      (void)verify_checkpoint_bytes(bad, where);
      ADD_FAILURE() << "a flip at byte " << at << " of " << good.size() << " was accepted";
    } catch (const CheckpointError& e) {
      ++refused;
      EXPECT_THAT(e.what(), testing::StartsWith(where + ":")) << at;
    }
  }
  // Every bit of the last 160 bytes: the seal, the end-of-directory record, the directory's tail.
  for (std::size_t at = good.size() - 160; at < good.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ (1 << bit));
      ++cases;
      try {
        (void)verify_checkpoint_bytes(bad, where);
        ADD_FAILURE() << "bit " << bit << " of byte " << at << " of " << good.size()
                      << " was accepted";
      } catch (const CheckpointError&) {
        ++refused;
      }
    }
  for (int k = 0; k < 400; ++k) {
    const std::size_t length =
        k < 100 ? good.size() - 1 - static_cast<std::size_t>(k) : random() % good.size();
    ++cases;
    try {
      (void)verify_checkpoint_bytes(std::string_view(good).substr(0, length), where);
      ADD_FAILURE() << "a cut to " << length << " bytes was accepted";
    } catch (const CheckpointError& e) {
      ++refused;
      EXPECT_THAT(e.what(), testing::StartsWith(where + ":"));
    }
  }
  EXPECT_EQ(refused, cases);
}

// The functions that load a checkpoint all verify it first.
TEST_F(CheckpointIntegrity, EveryLoaderRefusesADamagedFile) {
  const std::string good = read_all(checkpoint_);
  std::mt19937_64 random(3);
  for (int k = 0; k < 6; ++k) {
    std::string bad = good;
    if (k % 2 == 0) {
      const std::size_t at = random() % good.size();
      bad[at] = static_cast<char>(bad[at] ^ (1 << (random() % 8)));
    } else {
      bad.resize(random() % good.size());
    }
    const auto path = dir_->path() / ("damaged-" + std::to_string(k) + ".pt");
    write_all(path, bad);
    const auto names_it = [&](const auto& load) {
      try {
        load();
        ADD_FAILURE() << "case " << k << " was loaded";
      } catch (const CheckpointError& e) {
        EXPECT_THAT(e.what(), HasSubstr(path.string())) << k;
      }
    };
    names_it([&] { (void)read_checkpoint_info(path); });
    names_it([&] { (void)load_checkpoint_model(path); });
    names_it([&] { (void)checkpoint_parameter_count(path); });
    names_it([&] { (void)Trainer::resume(*dataset_, path, dir_->path() / "resumed"); });
    names_it([&] { write_weights_only(path, dir_->path() / "slim.pt"); });
    EXPECT_FALSE(std::filesystem::exists(dir_->path() / "slim.pt"));
  }
}

// A file written before seals existed (LibTorch's plain archive) still loads, checked by each
// record's CRC-32 (deflated records inflated first); damage to a record's bytes is named.
TEST_F(CheckpointIntegrity, UnsealedArchivesAreCheckedRecordByRecord) {
  std::string bytes = read_all(checkpoint_);
  const std::size_t seal = 17 + 32;
  bytes.resize(bytes.size() - seal);
  bytes[bytes.size() - 2] = 0;  // comment length 0: LibTorch's own output
  bytes[bytes.size() - 1] = 0;
  const auto plain = dir_->path() / "plain.pt";
  write_all(plain, bytes);
  const auto found = verify_checkpoint_file(plain);
  EXPECT_FALSE(found.sealed);
  EXPECT_TRUE(found.digest.empty());
  EXPECT_NO_THROW((void)load_checkpoint_model(plain));
  // The description record ("meta") is stored after its local header; flip a byte of its text.
  const auto meta = bytes.find("dstudio-checkpoint-1");
  ASSERT_NE(meta, std::string::npos);
  bytes[meta + 3] = static_cast<char>(bytes[meta + 3] ^ 0x20);
  write_all(plain, bytes);
  try {
    (void)read_checkpoint_info(plain);
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("its CRC-32 does not match"));
    EXPECT_THAT(e.what(), HasSubstr("plain.pt"));
  }
  // Sealing it again (after the record is restored) gives back the original file exactly.
  bytes[meta + 3] = static_cast<char>(bytes[meta + 3] ^ 0x20);
  seal_checkpoint(bytes);
  EXPECT_EQ(bytes, read_all(checkpoint_));
}

// A directory entry whose attributes gained the MS-DOS folder bit: LibTorch's reader would take the
// tensor's record for a folder and leave the tensor's memory as it found it. Refused, named.
TEST_F(CheckpointIntegrity, AnEntryMarkedAsAFolderIsRefused) {
  std::string bytes = read_all(checkpoint_);
  bytes.resize(bytes.size() - (17 + 32));
  bytes[bytes.size() - 2] = 0;
  bytes[bytes.size() - 1] = 0;
  const auto entry = bytes.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(entry, std::string::npos);
  const std::string name = bytes.substr(entry + 46, static_cast<unsigned char>(bytes[entry + 28]));
  bytes[entry + 38] = static_cast<char>(bytes[entry + 38] | 0x10);
  try {
    (void)verify_checkpoint_bytes(bytes, "plain.pt");
    FAIL() << "accepted";
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("plain.pt: entry " + name +
                                    " is damaged (its directory entry marks it as a folder)"));
  }
}

// Damage to a checkpoint without a seal, where only the zip's own checks stand between the file
// and LibTorch's reader (which crashes and over-allocates on hostile input). Most mutations land
// in the zip's structure (local headers, the central directory, the end records), which the
// CRC-32s do not cover. Each mutant is refused, or loaded in a child process (so a crash inside
// LibTorch is counted, not fatal) under a memory and time limit, with exactly the original weights.
// $DSTUDIO_CHECKPOINT_MUTANTS sets the count (default 300); $DSTUDIO_CHECKPOINT_MUTANTS_OUT keeps
// the failures there.
TEST_F(CheckpointIntegrity, DamagedUnsealedArchivesAreRefusedOrLoadTheSameWeights) {
  std::string plain = read_all(checkpoint_);
  plain.resize(plain.size() - (17 + 32));
  plain[plain.size() - 2] = 0;
  plain[plain.size() - 1] = 0;
  const auto reference_path = dir_->path() / "reference.pt";
  write_all(reference_path, plain);
  const DecisionModel reference = load_checkpoint_model(reference_path);
  const auto reference_parameters = reference->named_parameters();

  // The zip's structure: every byte of every header and end record.
  std::vector<std::size_t> structure;
  const auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(static_cast<unsigned char>(plain[at]) |
                                    static_cast<unsigned char>(plain[at + 1]) << 8);
  };
  for (std::size_t at = 0; at + 4 <= plain.size(); ++at) {
    if (plain.compare(at, 2, "PK") != 0) continue;
    const int kind = plain[at + 2] * 256 + plain[at + 3];
    std::size_t length = 0;
    if (kind == 0x0304 && at + 30 <= plain.size())
      length = 30 + u16(at + 26) + u16(at + 28);
    else if (kind == 0x0102 && at + 46 <= plain.size())
      length = 46 + u16(at + 28) + u16(at + 30) + u16(at + 32);
    else if (kind == 0x0506)
      length = 22;
    else if (kind == 0x0606)
      length = 56;
    else if (kind == 0x0607)
      length = 20;
    for (std::size_t i = at; i < std::min(plain.size(), at + length); ++i) structure.push_back(i);
  }
  ASSERT_GT(structure.size(), 1000u);

  const char* env = std::getenv("DSTUDIO_CHECKPOINT_MUTANTS");
  const int count = env ? std::atoi(env) : 300;
  std::mt19937_64 random(20261126);
  int refused = 0, same = 0, read_by_libtorch = 0;
  std::vector<std::string> failures;
  const auto path = dir_->path() / "mutant.pt";
  for (int k = 0; k < count; ++k) {
    std::string bad = plain;
    const std::size_t at =
        random() % 5 != 0 ? structure[random() % structure.size()] : random() % plain.size();
    switch (random() % 5) {
      case 0:
        bad[at] = static_cast<char>(bad[at] ^ (1 << (random() % 8)));
        break;
      case 1:
        bad[at] = static_cast<char>(random());
        break;
      case 2:
        bad.replace(at, std::min<std::size_t>(8, bad.size() - at),
                    std::min<std::size_t>(8, bad.size() - at), '\0');
        break;
      case 3:
        bad.replace(at, std::min<std::size_t>(4, bad.size() - at),
                    std::min<std::size_t>(4, bad.size() - at), '\xff');
        break;
      default:
        bad.resize(at);
        break;
    }
    if (bad == plain) {
      ++same;
      continue;
    }
    try {
      (void)verify_checkpoint_bytes(bad, "mutant.pt");
    } catch (const CheckpointError&) {
      ++refused;
      continue;
    }
    ++read_by_libtorch;
    write_all(path, bad);
    std::fflush(nullptr);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // 0: the same weights; 1: refused; 2: another exception; 3: other weights.
      alarm(20);
      // What the process maps already, plus 1 GiB: a length read from damaged bytes must not
      // become a multi-gigabyte allocation.
      unsigned long pages = 0;
      if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(statm, "%lu", &pages) != 1) pages = 0;
        std::fclose(statm);
      }
      rlimit limit{};
      limit.rlim_cur = limit.rlim_max =
          static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
          (rlim_t{1} << 30);
      setrlimit(RLIMIT_AS, &limit);
      int code = 0;
      try {
        const DecisionModel model = load_checkpoint_model(path);
        const auto parameters = model->named_parameters();
        if (parameters.size() != reference_parameters.size()) code = 3;
        for (const auto& p : reference_parameters) {
          const auto* found = parameters.find(p.key());
          if (code == 0 && (!found || !torch::equal(*found, p.value()))) code = 3;
        }
      } catch (const CheckpointError&) {
        code = 1;
      } catch (...) {
        code = 2;
      }
      _exit(code);
    }
    int status = 0;
    waitpid(child, &status, 0);
    const std::string where =
        "mutation " + std::to_string(k) + " at byte " + std::to_string(at) + ": ";
    if (WIFSIGNALED(status))
      failures.push_back(where +
                         (WTERMSIG(status) == SIGALRM
                              ? "LibTorch ran past 20 s"
                              : "LibTorch died by signal " + std::to_string(WTERMSIG(status))));
    else if (WEXITSTATUS(status) == 0)
      ++same;
    else if (WEXITSTATUS(status) == 1)
      ++refused;
    else if (WEXITSTATUS(status) == 2)
      failures.push_back(where + "not a CheckpointError");
    else
      failures.push_back(where + "loaded other weights");
    if (const char* out = std::getenv("DSTUDIO_CHECKPOINT_MUTANTS_OUT");
        out && !(WIFEXITED(status) && WEXITSTATUS(status) <= 1)) {
      write_all(std::filesystem::path(out) / ("mutant-" + std::to_string(k) + ".pt"), bad);
      write_all(std::filesystem::path(out) / "original.pt", plain);
    }
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(refused + same + static_cast<int>(failures.size()), count);
  std::printf(
      "%d damaged unsealed checkpoints: %d refused, %d loaded the same weights (%d of the damaged "
      "ones passed the zip's checks and "
      "were read by LibTorch), %d failures\n",
      count, refused, same, read_by_libtorch, static_cast<int>(failures.size()));
}

}  // namespace
}  // namespace dstudio::models
