// SessionFactory: how NewSession (session.h) finds the implementation for a
// set of options. Each implementation registers one factory at load time;
// exactly one factory must accept the options.
//
//   class MySessionFactory : public SessionFactory {
//     bool AcceptsOptions(const SessionOptions& o) override { return o.target == "my://"; }
//     Status NewSession(const SessionOptions& o, std::unique_ptr<Session>* out) override;
//   };
//   static SessionFactoryRegistrar my_registrar("MY_SESSION", new MySessionFactory);
#ifndef TENSORWEAVE_COMMON_RUNTIME_SESSION_FACTORY_H_
#define TENSORWEAVE_COMMON_RUNTIME_SESSION_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"

namespace tensorweave {

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  // True when this factory makes sessions for `options` (usually decided by
  // the target).
  virtual bool AcceptsOptions(const SessionOptions& options) = 0;
  virtual Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* session) = 0;
  // What Reset (session.h) does for sessions of this kind. UNIMPLEMENTED
  // unless the factory overrides it.
  virtual Status Reset(const SessionOptions& options, const std::vector<std::string>& containers);

  // Takes ownership. Registering a second factory under one name is a
  // programmer error: it aborts with a message.
  static void Register(const std::string& name, SessionFactory* factory);

  // The one factory that accepts `options`. NOT_FOUND listing the registered
  // factories when none does; INTERNAL listing the candidates when several do.
  static Status GetFactory(const SessionOptions& options, SessionFactory** factory);
};

struct SessionFactoryRegistrar {
  SessionFactoryRegistrar(const std::string& name, SessionFactory* factory) {
    SessionFactory::Register(name, factory);
  }
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_SESSION_FACTORY_H_
