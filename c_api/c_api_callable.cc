// Prepared runs (TW_SessionMakeCallable / RunCallable / ReleaseCallable):
// argument translation into Session::MakeCallable, RunCallable and
// ReleaseCallable, nothing more.
#include <utility>
#include <vector>

#include "c_api/c_api_internal.h"

using tensorweave::CallableOptions;
using tensorweave::Status;
using tensorweave::Tensor;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

Status MakeCallable(TF_Session* session, const TF_Buffer* callable_options, int64_t* handle) {
  if (session == nullptr || handle == nullptr) {
    return errors::InvalidArgument("TW_SessionMakeCallable needs a session and a handle to fill");
  }
  CallableOptions options;
  if (callable_options == nullptr ||
      (callable_options->data == nullptr && callable_options->length > 0) ||
      !options.ParseFromArray(callable_options->data, static_cast<int>(callable_options->length))) {
    return errors::InvalidArgument("Unparseable CallableOptions proto");
  }
  TW_RETURN_IF_ERROR(c_api::ExtendSessionWithNewNodes(session));
  tensorweave::Session::CallableHandle made = 0;
  TW_RETURN_IF_ERROR(session->session->MakeCallable(options, &made));
  *handle = made;
  return Status::OK();
}

// `run_metadata` (may be NULL) gets the serialized RunMetadata, also when
// the run fails.
Status RunCallable(TF_Session* session, int64_t handle, TF_Tensor* const* input_values, int ninputs,
                   TF_Tensor** output_values, int noutputs, TF_Buffer* run_metadata) {
  if (session == nullptr) return errors::InvalidArgument("TW_SessionRunCallable: session is NULL");
  if (ninputs < 0 || noutputs < 0) {
    return errors::InvalidArgument("TW_SessionRunCallable: negative count of inputs or outputs");
  }
  std::vector<Tensor> feeds(ninputs);
  for (int i = 0; i < ninputs; ++i) {
    if (input_values[i] == nullptr) {
      return errors::InvalidArgument("Input ", i, " is a NULL tensor");
    }
    TW_RETURN_IF_ERROR(c_api::TensorFromC(*input_values[i], &feeds[i]));
  }
  std::vector<Tensor> fetches;
  if (run_metadata != nullptr) {
    tensorweave::RunMetadata metadata;
    const Status run = session->session->RunCallable(handle, feeds, &fetches, &metadata);
    TW_RETURN_IF_ERROR(c_api::StringToBuffer(metadata.SerializeAsString(), run_metadata));
    TW_RETURN_IF_ERROR(run);
  } else {
    TW_RETURN_IF_ERROR(session->session->RunCallable(handle, feeds, &fetches));
  }
  if (fetches.size() != static_cast<size_t>(noutputs)) {
    return errors::InvalidArgument("Callable ", handle, " fetches ", fetches.size(),
                                   " tensors, but the output array has room for ", noutputs);
  }
  return c_api::TensorsToC(&fetches, noutputs, output_values);
}

}  // namespace

extern "C" {

void TW_SessionMakeCallable(TF_Session* session, const TF_Buffer* callable_options, int64_t* handle,
                            TF_Status* status) {
  c_api::GuardVoid(status,
                   [&] { c_api::Set(status, MakeCallable(session, callable_options, handle)); });
}

void TW_SessionRunCallable(TF_Session* session, int64_t handle, TF_Tensor* const* input_values,
                           int ninputs, TF_Tensor** output_values, int noutputs,
                           TF_Status* status) {
  for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, RunCallable(session, handle, input_values, ninputs, output_values, noutputs,
                                   /*run_metadata=*/nullptr));
  });
}

void TW_SessionRunCallableWithMetadata(TF_Session* session, int64_t handle,
                                       TF_Tensor* const* input_values, int ninputs,
                                       TF_Tensor** output_values, int noutputs,
                                       TF_Buffer* run_metadata, TF_Status* status) {
  for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, RunCallable(session, handle, input_values, ninputs, output_values, noutputs,
                                   run_metadata));
  });
}

void TW_SessionReleaseCallable(TF_Session* session, int64_t handle, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, session == nullptr
                           ? errors::InvalidArgument("TW_SessionReleaseCallable: session is NULL")
                           : session->session->ReleaseCallable(handle));
  });
}

}  // extern "C"
