// The translation unit that builds the engine's shared precompiled header (see CMakeLists.txt):
// it holds no code of its own.
