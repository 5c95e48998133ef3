# Sourced by the scripts that compile. The precompiled header would make every translation
# unit uncacheable without this sloppiness. No CCACHE_BASEDIR: with it, ccache hashes paths
# relative to the build folder, and two checkouts (worktrees, clones) with different headers
# under the same relative paths were seen to share objects compiled against the other's
# headers (a minimal build that segfaulted). Absolute paths keep each checkout's cache apart.
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
