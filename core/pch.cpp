// The precompiled header of every core layer (core/CMakeLists.txt) is built with this file.
