// The project version; CMake reads it from here (xeus style).
#ifndef XWARP_VERSION_HPP
#define XWARP_VERSION_HPP

#define XWARP_VERSION_MAJOR 0
#define XWARP_VERSION_MINOR 1
#define XWARP_VERSION_PATCH 0
#define XWARP_VERSION "0.1.0"

#endif
