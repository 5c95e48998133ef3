#pragma once
// SHA-256 (FIPS 180-4), computed by OpenSSL's libcrypto. Run files record one digest per
// member in meta.json so a member swapped or damaged after writing is caught (and users can
// check members with Python's hashlib); the prediction cache is keyed by the digests of a
// model file and of a dataset's inputs.
#include <string>
#include <string_view>

namespace shardlens {

// Lower-case hexadecimal digest (64 characters).
std::string sha256_hex(std::string_view data);
// The digest of a file's bytes, read in chunks (never held whole). Throws InputError
// "PATH: cannot open (reason)" / "PATH: read error".
std::string sha256_file_hex(const std::string& path);

}  // namespace shardlens
