// Package selection says whether a rule applies to an object: its
// selection fields (selector, namespaceSelector, names, namespaces,
// excludeNamespaces, when) compiled into a Selection, and why an object
// fails them, named as the file names them. Package rules compiles one
// per rule.
package selection
