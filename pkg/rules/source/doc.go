// Package source says which objects rules read besides the object itself,
// and how an object names them: the table of sources. The Namespace of an
// object (Namespace: namespace selectors, fromNamespace, CEL's
// namespaceObject, the opt-out), a Pod's Node (Node: fromNode), an
// object's controller owners (Owner: fromOwner; owner.go) and the objects
// an object refers to by a field (Ref: fromRef; ref.go) are its
// entries, each only data: the value form that reads it, the related
// resource, the field of an object that names the related object, and
// how messages word it. Everything that follows a source — the decoder's
// value forms, the JSON Schema, the caches' projection, the controller's
// watch and index from a related object to the objects that name it, the
// RBAC it needs, the lookups of every command — is computed from an entry,
// so a new source is one more entry.
//
// A reader starts at Source (source.go), then the entries (entries.go).
// The related objects themselves are found through a Lookup, passed to
// each evaluation: the controller answers from its informers, the
// commands from a list made once.
//
// Resource (resource.go), a resource name resolved through discovery, is
// here because an entry names the resource it reads; the rules and every
// package above them use it.
//
// Layer "base" of deps_test.go: it imports nothing of kube-annotator and
// no client.
package source
