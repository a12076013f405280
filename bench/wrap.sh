#!/bin/sh
# wrap: the msg-wrap --lines part of frames.sh on its own.
# usage: sh bench/wrap.sh [BUILD]
exec sh "$(dirname "$0")/frames.sh" "${1:-build}" wrap
