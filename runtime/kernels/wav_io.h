// 16-bit PCM WAV encoding, as TensorFlow's AudioSummaryV2 writes it
// (tensorflow/core/lib/wav): a 44-byte RIFF/WAVE header ("fmt " chunk of 16
// bytes, PCM) followed by little-endian int16 samples, interleaved by
// channel. A float sample s becomes round(s * 32768) clamped to
// [-32768, 32767]; NaN becomes 0.
//
//   std::string wav;
//   TW_RETURN_IF_ERROR(EncodeAudioAsS16LEWav(samples, 44100, 2, frames, &wav));
#ifndef TENSORWEAVE_KERNELS_WAV_IO_H_
#define TENSORWEAVE_KERNELS_WAV_IO_H_

#include <cstddef>
#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

// `audio` holds num_frames * num_channels samples (may be null when
// num_frames is 0). INVALID_ARGUMENT when sample_rate is not in (0, 2^32),
// num_channels not in (0, 2^16), or the file would pass 4 GiB.
Status EncodeAudioAsS16LEWav(const float* audio, size_t sample_rate, size_t num_channels,
                             size_t num_frames, std::string* wav);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_WAV_IO_H_
