# Sourced by the scripts: finds nvcc where the CUDA toolkit installs it, so
# CMake's BULKSCORE_CUDA=AUTO builds the CUDA backend when the toolkit exists.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null 2>&1; then
  export CUDACXX="${CUDACXX:-$(command -v nvcc)}"
fi
JOBS="${JOBS:-$(nproc)}"
