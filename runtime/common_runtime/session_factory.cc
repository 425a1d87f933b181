#include "runtime/common_runtime/session_factory.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace tensorweave {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<SessionFactory>> factories;  // sorted by name
};

// Created on first use so that registrars in any translation unit can run
// in any order during static initialization; never destroyed.
Registry* GlobalRegistry() {
  static Registry* registry = new Registry();
  return registry;
}

std::string DescribeOptions(const SessionOptions& options) {
  return StrCat("{target: \"", options.target, "\"}");
}

}  // namespace

void SessionFactory::Register(const std::string& name, SessionFactory* factory) {
  Registry* registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry->mu);
  if (!registry->factories.emplace(name, std::unique_ptr<SessionFactory>(factory)).second) {
    std::fprintf(stderr, "tensorweave: two session factories registered as %s\n", name.c_str());
    std::abort();
  }
}

Status SessionFactory::GetFactory(const SessionOptions& options, SessionFactory** factory) {
  Registry* registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry->mu);
  std::vector<std::string> all, accepting;
  *factory = nullptr;
  for (auto& entry : registry->factories) {
    all.push_back(entry.first);
    if (entry.second->AcceptsOptions(options)) {
      accepting.push_back(entry.first);
      *factory = entry.second.get();
    }
  }
  if (accepting.empty()) {
    return errors::NotFound(
        "No session factory registered for the given session options: ", DescribeOptions(options),
        " Registered factories are {", StrJoin(all, ", "), "}.");
  }
  if (accepting.size() > 1) {
    *factory = nullptr;
    return errors::Internal(
        "Multiple session factories registered for the given session "
        "options: ",
        DescribeOptions(options), " Candidate factories are {", StrJoin(accepting, ", "), "}.");
  }
  return Status::OK();
}

Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* session) {
  SessionFactory* factory = nullptr;
  TW_RETURN_IF_ERROR(SessionFactory::GetFactory(options, &factory));
  return factory->NewSession(options, session);
}

Status SessionFactory::Reset(const SessionOptions& options,
                             const std::vector<std::string>& containers) {
  return errors::Unimplemented("Sessions for ", DescribeOptions(options), " cannot be reset");
}

Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) {
  SessionFactory* factory = nullptr;
  TW_RETURN_IF_ERROR(SessionFactory::GetFactory(options, &factory));
  return factory->Reset(options, containers);
}

}  // namespace tensorweave
