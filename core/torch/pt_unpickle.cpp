// The LibTorch half of the .pt dump reader (pt_unpickle.h; pt_dump.cpp is the other half: it
// has held the ZIP's declared sizes against the load budget and read the members with
// libzip). LibTorch's unpickler trusts the pickle: a storage's size is the element count the
// pickle names (not the bytes its data/N member holds), and a tensor's sizes, strides and
// storage offset are set without a look at the storage. So:
//   1. the pickle is walked on a model of the unpickler's stack (core/io/pt_pickle.h), so the
//      unpickler never meets an opcode it would act on without a check;
//   2. every data/N member becomes a storage of exactly its own size, and the unpickler is
//      handed those storages (DeserializationStorageContext) and nothing else: a storage
//      without a member is refused, so no storage can claim more bytes than it holds;
//   3. every tensor's sizes, strides, storage offset and element size are checked against
//      its storage's bytes with checked arithmetic, and the values it expands to against the
//      budget, before any element is read.
// Plain C++17 (see core/runfile/dump_array.h): fuzz/fuzz_pt.cpp builds it with clang.
#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/storage_context.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/io/detail.h"
#include "core/io/pt_pickle.h"
#include "core/torch/pt_unpickle.h"
#include "core/vocabulary/memory_budget.h"
#include "core/vocabulary/types.h"

namespace shardlens {
namespace {

using io_detail::checked_add;
using io_detail::checked_mul;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// A key as messages quote it: one line, at most 40 characters.
std::string key_text(const std::string& key) {
  std::string s;
  for (char c : key.substr(0, 40))
    s += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return "'" + s + (key.size() > 40 ? "...'" : "'");
}

std::string list_text(c10::IntArrayRef values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// The bytes a strided tensor reaches in its storage: (offset + sum (size_d - 1) * stride_d
// + 1) * element size, or 0 when it has no element; nullopt when that overflows 64 bits.
// Sizes, strides and offset are non-negative (checked by the caller).
std::optional<uint64_t> reached_bytes(c10::IntArrayRef sizes, c10::IntArrayRef strides,
                                      int64_t offset, uint64_t element_size) {
  for (int64_t s : sizes)
    if (s == 0) return 0;
  std::optional<uint64_t> last = uint64_t(offset);
  for (size_t d = 0; d < sizes.size() && last; ++d) {
    const auto step = checked_mul(uint64_t(sizes[d] - 1), uint64_t(strides[d]));
    last = step ? checked_add(*last, *step) : std::nullopt;
  }
  if (!last) return std::nullopt;
  const auto count = checked_add(*last, 1);
  return count ? checked_mul(*count, element_size) : std::nullopt;
}

// The number of elements, nullopt when it overflows 64 bits.
std::optional<uint64_t> element_count(c10::IntArrayRef sizes) {
  std::optional<uint64_t> n = 1;
  for (int64_t s : sizes) n = n ? checked_mul(*n, uint64_t(s)) : std::nullopt;
  return n;
}

// Whether a tensor's layout and type are ones a dump is read as (strided, real or integer).
bool readable_kind(const at::Tensor& t) {
  return t.layout() == at::kStrided && !t.is_quantized() && !t.is_complex() && t.device().is_cpu();
}

// Checks a tensor against its storage before any element is read. `held` maps the storages
// this reader made to the bytes they hold; a storage it did not make (one the pickle gave
// no data/ member) holds none, whatever size it claims.
void check_tensor(const at::Tensor& t, const std::string& path, const std::string& key,
                  const std::unordered_map<const c10::StorageImpl*, uint64_t>& held) {
  const std::string where = path + ": tensor " + key_text(key);
  if (!readable_kind(t))
    throw InputError(where + " is not a dense real or integer CPU tensor (" +
                     std::string(c10::toString(t.scalar_type())) + ")");
  const c10::IntArrayRef sizes = t.sizes();
  const c10::IntArrayRef strides = t.strides();
  const int64_t offset = t.storage_offset();
  if (strides.size() != sizes.size())
    throw InputError(where + " has " + std::to_string(sizes.size()) + " sizes but " +
                     std::to_string(strides.size()) + " strides");
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0)
      throw InputError(where + " has a negative size or stride (sizes " + list_text(sizes) +
                       ", strides " + list_text(strides) + ")");
  }
  if (offset < 0)
    throw InputError(where + " has a negative storage offset (" + std::to_string(offset) + ")");
  uint64_t holds = 0;
  if (t.has_storage()) {
    const auto it = held.find(t.storage().unsafeGetStorageImpl());
    if (it != held.end()) holds = it->second;
  }
  const uint64_t element_size = uint64_t(t.element_size());
  const std::optional<uint64_t> needs = reached_bytes(sizes, strides, offset, element_size);
  if (!needs || *needs > holds) {
    const std::string need_text =
        needs ? std::to_string(*needs) + " bytes" : "more than 2^64 bytes";
    throw InputError(where + " needs " + need_text + " but its storage holds " +
                     std::to_string(holds) + " (sizes " + list_text(sizes) + ", strides " +
                     list_text(strides) + ", storage offset " + std::to_string(offset) + ", " +
                     std::to_string(element_size) + "-byte elements)");
  }
}

// A storage's bytes: the member's own string, which the DataPtr owns (no copy). Its data is
// at least 16-byte aligned (heap memory, or the buffer inside a heap-allocated string).
at::DataPtr owned_bytes(std::string bytes) {
  auto* owner = new std::string(std::move(bytes));
  return at::DataPtr(
      owner->data(), owner, [](void* p) { delete static_cast<std::string*>(p); },
      at::Device(at::kCPU));
}

// Unpickles the dict: the pickle's bytes, and the storages as the only tensor data.
c10::IValue unpickle(const std::string& path, PtMembers& members,
                     std::unordered_map<const c10::StorageImpl*, uint64_t>& held) {
  // Step 1: nothing LibTorch's unpickler would trust blindly (core/io/pt_pickle.h).
  check_pt_pickle(members.pickle, path);
  // Step 2: every storage member, at the size it really has.
  auto storages = std::make_shared<torch::jit::DeserializationStorageContext>();
  for (auto& [key, bytes] : members.storages) {
    const size_t size = bytes.size();
    c10::Storage storage(c10::Storage::use_byte_size_t(), size, owned_bytes(std::move(bytes)),
                         /*allocator=*/nullptr, /*resizable=*/false);
    held.emplace(storage.unsafeGetStorageImpl(), uint64_t(size));
    storages->addStorage(key, std::move(storage));
  }
  const std::string& pickle = members.pickle;
  size_t consumed = 0;
  auto read = [&pickle, &consumed](char* buffer, size_t len) -> size_t {
    const size_t n = std::min(len, pickle.size() - consumed);
    std::memcpy(buffer, pickle.data() + consumed, n);
    consumed += n;
    return n;
  };
  auto no_member = [&path](const std::string& key) -> at::DataPtr {
    throw InputError(path + ": a tensor's storage " + key_text(key) +
                     " has no data member in the archive");
  };
  // Every tensor on the CPU, whatever device it was saved from.
  torch::jit::Unpickler unpickler(read, /*type_resolver=*/nullptr, /*obj_loader=*/nullptr,
                                  no_member, at::Device(at::kCPU), /*use_storage_device=*/false,
                                  torch::jit::Unpickler::defaultTypeParser, storages);
  return unpickler.parse_ivalue();
}

DumpArray array_of(const at::Tensor& tensor) {
  const at::Tensor t = tensor.contiguous();
  DumpArray a;
  for (int64_t d : t.sizes()) a.shape.push_back(d);
  if (t.is_floating_point()) {
    a.integral = false;
    const at::Tensor d = t.to(at::kDouble).contiguous();
    a.reals.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  } else {
    const at::Tensor i = t.to(at::kLong).contiguous();
    a.ints.assign(i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + i.numel());
  }
  return a;
}

}  // namespace

DumpArrays unpickle_pt_dump(const std::string& path, PtMembers members, uint64_t member_bytes) {
  c10::IValue value;
  std::unordered_map<const c10::StorageImpl*, uint64_t> held;
  try {
    value = unpickle(path, members, held);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path + ": not a readable torch.save file (" + first_line(e.what()) + ")");
  }
  if (!value.isGenericDict()) throw InputError(path + ": a .pt dump must be a dict of tensors");

  // Step 3: every tensor against its storage, then the values against the budget.
  const auto dict = value.toGenericDict();
  uint64_t values = 0;   // elements of every tensor, each read as one 8-byte number
  uint64_t largest = 0;  // the temporaries of the largest one (a contiguous copy, converted)
  for (const auto& entry : dict) {
    if (!entry.key().isString()) throw InputError(path + ": a .pt dump's keys must be strings");
    if (!entry.value().isTensor()) continue;
    const std::string key = entry.key().toStringRef();
    const at::Tensor& t = entry.value().toTensor();
    check_tensor(t, path, key, held);
    // Bounded by the bytes it reaches in its storage, unless a stride is 0.
    const std::optional<uint64_t> n = element_count(t.sizes());
    const auto bytes = n ? checked_mul(*n, 8) : std::nullopt;
    const auto temporaries = n ? checked_mul(*n, 8 + uint64_t(t.element_size())) : std::nullopt;
    const auto sum = bytes ? checked_add(values, *bytes) : std::nullopt;
    if (!sum || !temporaries)
      throw InputError(path + ": tensor " + key_text(key) + " has sizes " + list_text(t.sizes()) +
                       ": too many elements to read");
    values = *sum;
    largest = std::max(largest, *temporaries);
  }
  const auto total = checked_add(member_bytes, values);
  const auto peak = total ? checked_add(*total, largest) : std::nullopt;
  check_load_budget(path, peak ? *peak : std::numeric_limits<uint64_t>::max(),
                    "its members decompressed and unpickled, and its tensors' values as 8-byte "
                    "numbers");

  DumpArrays arrays;
  for (const auto& entry : dict) {
    const std::string key = entry.key().toStringRef();
    const c10::IValue& v = entry.value();
    try {
      if (v.isTensor()) {
        arrays[key] = array_of(v.toTensor());
      } else if (v.isInt()) {
        arrays[key] = DumpArray{{}, true, {v.toInt()}, {}};
      } else if (v.isDouble()) {
        arrays[key] = DumpArray{{}, false, {}, {v.toDouble()}};
      } else {
        continue;  // strings and other metadata the dump may carry are not needed
      }
    } catch (const std::exception& e) {
      throw InputError(path + ": entry " + key_text(key) + " cannot be read (" +
                       first_line(e.what()) + ")");
    }
  }
  return arrays;
}

}  // namespace shardlens
