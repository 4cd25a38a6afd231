package reports

import (
	"cmp"
	"slices"
	"strconv"
)

// build returns the report of sn's objects, named name, and whether it
// reports anything: a report whose objects are all gone is deleted. The
// results are the findings of the rules in force, by object (resource,
// then name), rule and key; past max they are left out, and an
// annotation says how many.
func build(sn snapshot, name string, max int) (Report, bool) {
	slices.SortFunc(sn.objects, func(a, b object) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource), cmp.Compare(a.name, b.name))
	})
	rep := Report{
		APIVersion: ReportResource.GroupVersion().String(),
		Kind:       "Report",
		Metadata:   Metadata{Name: name, Namespace: sn.namespace, Labels: map[string]string{ManagedByLabel: ManagedBy}},
		Results:    []Result{},
	}
	if sn.namespace == "" {
		rep.Kind = "ClusterReport"
	}
	inForce := func(rule string) bool { return sn.rules == nil || sn.rules[rule] }
	for _, o := range sn.objects {
		rep.Summary.Pass += o.Pass
		rep.Summary.Skip += o.Skip
		for _, f := range o.Findings {
			if !inForce(f.Rule) {
				continue
			}
			rep.Summary.Fail++
			if len(rep.Results) < max {
				rep.Results = append(rep.Results, result(o, sn.namespace, f))
			}
		}
	}
	if omitted := rep.Summary.Fail - len(rep.Results); omitted > 0 {
		rep.Metadata.Annotations = map[string]string{OmittedAnnotation: strconv.Itoa(omitted)}
	}
	return rep, rep.Summary != Summary{}
}

// result is the result of the finding f on the object o of namespace.
func result(o object, namespace string, f Finding) Result {
	props := map[string]string{"state": f.State, "kind": f.Kind}
	msg := f.Kind + " " + f.Key + " is " + f.State
	if f.Why != "" {
		props["reason"] = f.Why
		msg += ": " + f.Why
	}
	return Result{
		Source:  Source,
		Policy:  f.Rule,
		Rule:    f.Key,
		Result:  ResultFail,
		Message: msg,
		Resources: []ObjectReference{{
			APIVersion: o.GVK.GroupVersion().String(),
			Kind:       o.GVK.Kind,
			Namespace:  namespace,
			Name:       o.name,
			UID:        o.UID,
		}},
		Properties: props,
	}
}
