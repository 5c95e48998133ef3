// Tests for core/io/pt_pickle: the walk of a .pt dump's pickle before LibTorch unpickles it
// (hostile ones refused). The pickles are written here opcode by opcode, as torch.save (protocol 2)
// writes them; the accepted ones were checked with torch.load (tests/integration/hostile_pt.py
// writes the same form and torch.load reads it).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/io/pt_pickle.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

using namespace std::string_literals;  // "..."s keeps embedded NULs

std::string u32(uint32_t v) {
  return std::string{char(v & 0xFF), char((v >> 8) & 0xFF), char((v >> 16) & 0xFF), char(v >> 24)};
}
std::string str(const std::string& s) {
  return "X" + u32(uint32_t(s.size())) + s;
}
std::string global(const std::string& module, const std::string& name) {
  return "c" + module + "\n" + name + "\n";
}
// torch._utils._rebuild_tensor_v2((storage 'key', numel), 0, (n,), (1,), False, OrderedDict())
std::string tensor(const std::string& key, int n, const std::string& type = "LongStorage") {
  const std::string storage =
      "(" + str("storage") + global("torch", type) + str(key) + str("cpu") + "K" + char(n) + "tQ";
  return global("torch._utils", "_rebuild_tensor_v2") + "(" + storage + "K\x00"s + "(K" + char(n) +
         "t(K\x01t\x89" + global("collections", "OrderedDict") + ")RtR";
}
std::string dump(const std::string& items) {
  return std::string("\x80\x02}(") + items + "u.";
}

std::string refusal(const std::string& pickle) {
  try {
    check_pt_pickle(pickle, "x.pt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PtPickle, AcceptsWhatTorchSaveWrites) {
  // A dict of tensors with memo entries, an int, a float, a string, True and None.
  const std::string items = str("index") + "q\x01" + tensor("0", 15) + "q\x02" + str("target") +
                            tensor("1", 15, "ByteStorage") + str("world_size") + "K\x04" +
                            str("loss") + "G" + std::string(8, '\0') + str("note") + str("x") +
                            str("flag") + "\x88" + str("none") + "N" + str("again") + "h\x02";
  EXPECT_EQ(refusal("\x80\x02}q\x00("s + items + "u."), "");
}

struct Bad {
  const char* name;
  std::string pickle;
  const char* needle;
};

class PtPickleRefuses : public ::testing::TestWithParam<Bad> {};

TEST_P(PtPickleRefuses, NamingFileAndReason) {
  const std::string message = refusal(GetParam().pickle);
  EXPECT_EQ(message.rfind("x.pt: data.pkl ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().needle), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, PtPickleRefuses,
    ::testing::Values(
        Bad{"NoProtocol", "}."s, "protocol 2"}, Bad{"Protocol4", "\x80\x04}."s, "protocol 2"},
        Bad{"NoStop", "\x80\x02}"s, "without STOP"},
        Bad{"StringPastEnd", "\x80\x02X\xff\xff\xff\xff."s, "past the end"},
        Bad{"GlobalPastEnd",
            "\x80\x02"s
            "ctorch",
            "past the end"},
        Bad{"MemoSkipsAhead", "\x80\x02}r\xff\xff\xff\xff."s, "skips ahead"},
        Bad{"MemoNeverSet", "\x80\x02}h\x05."s, "never set"},
        Bad{"SetItemsWithoutMark", "\x80\x02}u."s, "needs a MARK"},
        Bad{"OddSetItems", "\x80\x02}(K\x01u."s, "odd number"},
        Bad{"TupleOfNothing", "\x80\x02\x86."s, "takes 2 value(s)"},
        Bad{"PopBelowMark", "\x80\x02K\x01K\x02(\x86."s, "above the MARK"},
        Bad{"ItemsIntoAnInt", "\x80\x02}(K\x01K\x02K\x03(u."s, "no list or dict"},
        Bad{"TwoValuesAtStop", "\x80\x02}}."s, "STOP leaves 2"},
        Bad{"OpenMarkAtStop", "\x80\x02}(."s, "1 MARK"},
        Bad{"UnknownOpcode", "\x80\x02}\xff."s, "opcode 255"},
        Bad{"Long1Of2Bytes", "\x80\x02\x8a\x02\x00\x01."s, "LONG1 of 2 bytes"},
        Bad{"OsSystem",
            "\x80\x02"s
            "cos\nsystem\n.",
            "'os.system'"},
        Bad{"QuantizedTensor",
            "\x80\x02"s
            "ctorch._utils\n_rebuild_qtensor\n.",
            "GLOBAL"},
        Bad{"ComplexStorage",
            "\x80\x02"s
            "ctorch\nComplexDoubleStorage\n.",
            "GLOBAL"},
        Bad{"ReduceOfAnInt", "\x80\x02K\x01)R."s, "REDUCE or BUILD"},
        Bad{"ReduceOfAStorageType",
            "\x80\x02"s
            "ctorch\nLongStorage\n)R.",
            "REDUCE or BUILD"},
        Bad{"PersistentIdOfAString", "\x80\x02"s + str("a") + "Q.", "persistent id"},
        Bad{"PersistentIdOfAnIntType",
            "\x80\x02(" + str("storage") + "K\x04" + str("0") + str("cpu") + "K\x01tQ.",
            "persistent id"},
        Bad{"NegativeElementCount",
            "\x80\x02(" + str("storage") + global("torch", "LongStorage") + str("0") + str("cpu") +
                "J\xff\xff\xff\xfftQ.",
            "persistent id"},
        Bad{"NestedTuples", "\x80\x02)"s + std::string(100000, '\x85') + ".", "nest more than 64"},
        Bad{"ListInItself",
            "\x80\x02]q\x00"s +
                [] {
                  std::string s;
                  for (int i = 0; i < 100; ++i)
                    s += "(h\x00"
                         "e"s;
                  return s;
                }() +
                ".",
            "nest more than 64"}),
    [](const ::testing::TestParamInfo<Bad>& info) { return std::string(info.param.name); });

TEST(PtPickle, NestingUpToTheLimitIsAccepted) {
  // kMaxPickleNesting tuples, one inside the other: accepted; one more is refused.
  const std::string inner = "\x80\x02)" + std::string(kMaxPickleNesting - 1, '\x85');
  EXPECT_EQ(refusal(inner + "."), "");
  EXPECT_NE(refusal(inner + "\x85."), "");
}

}  // namespace
}  // namespace shardlens
