// See wav_io.h.
#include "runtime/kernels/wav_io.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tensorweave {
namespace {

constexpr size_t kHeaderBytes = 44;
constexpr size_t kBytesPerSample = 2;

void Append16(uint32_t value, std::string* out) {
  out->push_back(static_cast<char>(value & 0xff));
  out->push_back(static_cast<char>((value >> 8) & 0xff));
}
void Append32(uint32_t value, std::string* out) {
  Append16(value & 0xffff, out);
  Append16(value >> 16, out);
}

int16_t FloatToInt16Sample(float sample) {
  if (std::isnan(sample)) return 0;
  const float scaled = std::round(sample * 32768.0f);
  return static_cast<int16_t>(std::min(std::max(scaled, -32768.0f), 32767.0f));
}

}  // namespace

Status EncodeAudioAsS16LEWav(const float* audio, size_t sample_rate, size_t num_channels,
                             size_t num_frames, std::string* wav) {
  constexpr uint64_t kMaxUint32 = std::numeric_limits<uint32_t>::max();
  if (audio == nullptr && num_frames > 0) return errors::InvalidArgument("audio is null");
  if (sample_rate == 0 || sample_rate > kMaxUint32) {
    return errors::InvalidArgument("sample_rate must be in (0, 2^32), got: ", sample_rate);
  }
  if (num_channels == 0 || num_channels > std::numeric_limits<uint16_t>::max()) {
    return errors::InvalidArgument("num_channels must be in (0, 2^16), got: ", num_channels);
  }
  // Checked before multiplying so the sizes cannot wrap around.
  if (num_frames > kMaxUint32 / num_channels / kBytesPerSample) {
    return errors::InvalidArgument("Provided channels and frames cannot be encoded as a WAV.");
  }
  const uint64_t num_samples = static_cast<uint64_t>(num_frames) * num_channels;
  const uint64_t data_bytes = num_samples * kBytesPerSample;
  const uint64_t file_bytes = kHeaderBytes + data_bytes;
  if (file_bytes > kMaxUint32) {
    return errors::InvalidArgument("Provided channels and frames cannot be encoded as a WAV.");
  }
  wav->clear();
  wav->reserve(file_bytes);
  wav->append("RIFF");
  Append32(static_cast<uint32_t>(file_bytes - 8), wav);
  wav->append("WAVE");
  wav->append("fmt ");
  Append32(16, wav);  // the format chunk's size
  Append16(1, wav);   // PCM
  Append16(static_cast<uint32_t>(num_channels), wav);
  Append32(static_cast<uint32_t>(sample_rate), wav);
  // Bytes per second is wrapped to 32 bits as TensorFlow's header has it.
  Append32(static_cast<uint32_t>(sample_rate * kBytesPerSample * num_channels), wav);
  Append16(static_cast<uint32_t>(kBytesPerSample * num_channels), wav);
  Append16(16, wav);  // bits per sample
  wav->append("data");
  Append32(static_cast<uint32_t>(data_bytes), wav);
  for (uint64_t i = 0; i < num_samples; ++i) {
    Append16(static_cast<uint16_t>(FloatToInt16Sample(audio[i])), wav);
  }
  return Status::OK();
}

}  // namespace tensorweave
