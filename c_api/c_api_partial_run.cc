// Partial runs (TF_SessionPRunSetup / TF_SessionPRun / TF_DeletePRunHandle
// and the deprecated TF_PRunSetup / TF_PRun): argument translation into
// Session::PRunSetup and Session::PRun, nothing more.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api_internal.h"

using tensorweave::Status;
using tensorweave::Tensor;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// A handle the caller frees with TF_DeletePRunHandle.
Status CopyHandle(const std::string& handle, const char** out) {
  char* copy = new char[handle.size() + 1];
  std::memcpy(copy, handle.c_str(), handle.size() + 1);
  *out = copy;
  return Status::OK();
}

Status NamesOfOutputs(const TF_Output* outputs, int count, const char* role,
                      std::vector<std::string>* names) {
  if (count < 0) return errors::InvalidArgument("Negative count of ", role, "s");
  names->resize(count);
  for (int i = 0; i < count; ++i) {
    TW_RETURN_IF_ERROR(c_api::CheckOutput(outputs[i], role, i));
    (*names)[i] = c_api::OutputName(outputs[i]);
  }
  return Status::OK();
}

Status Strings(const char* const* strings, int count, const char* role,
               std::vector<std::string>* out) {
  if (count < 0) return errors::InvalidArgument("Negative count of ", role, "s");
  out->resize(count);
  for (int i = 0; i < count; ++i) {
    if (strings[i] == nullptr) return errors::InvalidArgument(role, " ", i, " is NULL");
    (*out)[i] = strings[i];
  }
  return Status::OK();
}

Status Feeds(const std::vector<std::string>& names, TF_Tensor* const* values,
             std::vector<std::pair<std::string, Tensor>>* feeds) {
  feeds->resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (values[i] == nullptr) {
      return errors::InvalidArgument("Input ", i, " ('", names[i], "') has a NULL tensor");
    }
    (*feeds)[i].first = names[i];
    TW_RETURN_IF_ERROR(c_api::TensorFromC(*values[i], &(*feeds)[i].second));
  }
  return Status::OK();
}

Status SessionPRunSetup(TF_Session* session, const TF_Output* inputs, int ninputs,
                        const TF_Output* outputs, int noutputs,
                        const TF_Operation* const* target_opers, int ntargets,
                        const char** handle) {
  if (session == nullptr || handle == nullptr) {
    return errors::InvalidArgument("TF_SessionPRunSetup needs a session and a handle to fill");
  }
  if (ntargets < 0) return errors::InvalidArgument("Negative count of targets");
  TW_RETURN_IF_ERROR(c_api::ExtendSessionWithNewNodes(session));
  std::vector<std::string> feeds, fetches, targets(ntargets);
  TW_RETURN_IF_ERROR(NamesOfOutputs(inputs, ninputs, "Input", &feeds));
  TW_RETURN_IF_ERROR(NamesOfOutputs(outputs, noutputs, "Output", &fetches));
  for (int i = 0; i < ntargets; ++i) {
    if (target_opers[i] == nullptr) return errors::InvalidArgument("Target ", i, " is NULL");
    targets[i] = c_api::ToNode(target_opers[i])->name();
  }
  std::string made;
  TW_RETURN_IF_ERROR(session->session->PRunSetup(feeds, fetches, targets, &made));
  return CopyHandle(made, handle);
}

Status SessionPRun(TF_Session* session, const char* handle, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                   TF_Tensor** output_values, int noutputs) {
  if (session == nullptr || handle == nullptr) {
    return errors::InvalidArgument("TF_SessionPRun needs a session and a handle");
  }
  TW_RETURN_IF_ERROR(c_api::ExtendSessionWithNewNodes(session));
  std::vector<std::string> feed_names, fetches;
  TW_RETURN_IF_ERROR(NamesOfOutputs(inputs, ninputs, "Input", &feed_names));
  TW_RETURN_IF_ERROR(NamesOfOutputs(outputs, noutputs, "Output", &fetches));
  std::vector<std::pair<std::string, Tensor>> feeds;
  TW_RETURN_IF_ERROR(Feeds(feed_names, input_values, &feeds));
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(session->session->PRun(handle, feeds, fetches, &values));
  return c_api::TensorsToC(&values, noutputs, output_values);
}

Status DeprecatedPRunSetup(TF_DeprecatedSession* session, const char** input_names, int ninputs,
                           const char** output_names, int noutputs, const char** target_names,
                           int ntargets, const char** handle) {
  if (session == nullptr || handle == nullptr) {
    return errors::InvalidArgument("TF_PRunSetup needs a session and a handle to fill");
  }
  std::vector<std::string> feeds, fetches, targets;
  TW_RETURN_IF_ERROR(Strings(input_names, ninputs, "Input", &feeds));
  TW_RETURN_IF_ERROR(Strings(output_names, noutputs, "Output", &fetches));
  TW_RETURN_IF_ERROR(Strings(target_names, ntargets, "Target", &targets));
  std::string made;
  TW_RETURN_IF_ERROR(session->session->PRunSetup(feeds, fetches, targets, &made));
  return CopyHandle(made, handle);
}

Status DeprecatedPRun(TF_DeprecatedSession* session, const char* handle, const char** input_names,
                      TF_Tensor** inputs, int ninputs, const char** output_names,
                      TF_Tensor** outputs, int noutputs) {
  if (session == nullptr || handle == nullptr) {
    return errors::InvalidArgument("TF_PRun needs a session and a handle");
  }
  std::vector<std::string> feed_names, fetches;
  TW_RETURN_IF_ERROR(Strings(input_names, ninputs, "Input", &feed_names));
  TW_RETURN_IF_ERROR(Strings(output_names, noutputs, "Output", &fetches));
  std::vector<std::pair<std::string, Tensor>> feeds;
  TW_RETURN_IF_ERROR(Feeds(feed_names, inputs, &feeds));
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(session->session->PRun(handle, feeds, fetches, &values));
  return c_api::TensorsToC(&values, noutputs, outputs);
}

}  // namespace

extern "C" {

void TF_SessionPRunSetup(TF_Session* session, const TF_Output* inputs, int ninputs,
                         const TF_Output* outputs, int noutputs,
                         const TF_Operation* const* target_opers, int ntargets, const char** handle,
                         TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, SessionPRunSetup(session, inputs, ninputs, outputs, noutputs, target_opers,
                                        ntargets, handle));
  });
}

void TF_SessionPRun(TF_Session* session, const char* handle, const TF_Output* inputs,
                    TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                    TF_Tensor** output_values, int noutputs,
                    const TF_Operation* const* target_opers, int ntargets, TF_Status* status) {
  for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, SessionPRun(session, handle, inputs, input_values, ninputs, outputs,
                                   output_values, noutputs));
  });
}

void TF_DeletePRunHandle(const char* handle) { delete[] handle; }

void TF_PRunSetup(TF_DeprecatedSession* session, const char** input_names, int ninputs,
                  const char** output_names, int noutputs, const char** target_oper_names,
                  int ntargets, const char** handle, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, DeprecatedPRunSetup(session, input_names, ninputs, output_names, noutputs,
                                           target_oper_names, ntargets, handle));
  });
}

void TF_PRun(TF_DeprecatedSession* session, const char* handle, const char** input_names,
             TF_Tensor** inputs, int ninputs, const char** output_names, TF_Tensor** outputs,
             int noutputs, const char** target_oper_names, int ntargets, TF_Status* status) {
  for (int i = 0; i < noutputs; ++i) outputs[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, DeprecatedPRun(session, handle, input_names, inputs, ninputs, output_names,
                                      outputs, noutputs));
  });
}

}  // extern "C"
