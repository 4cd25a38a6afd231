{{/*
The ClusterRole's and Role's rules, as `kube-annotator rbac` computes them
for the same rules (test/chart proves it for every ci/ values file).
Resource names resolve through files/resources.yaml, which is what the
rbac command's resolver answers for every name of every resource a
Kubernetes API server serves (generated: make chart-resources). A name it
does not hold is taken as resource.group, namespaced, as rbac takes a
custom resource the cluster does not serve yet.
*/}}

{{/* kube-annotator.resolve: dict name, where, table -> {group, resource, namespaced} as YAML. */}}
{{- define "kube-annotator.resolve" -}}
{{- $known := index .table .name }}
{{- if $known }}
{{- toYaml $known }}
{{- else if contains "." .name }}
{{- $parts := splitList "." .name }}
{{- $group := rest $parts | join "." }}
{{- if and (gt (len $parts) 2) (regexMatch "^v[0-9]+((alpha|beta)[0-9]+)?$" (index $parts 1)) }}
{{- $group = rest (rest $parts) | join "." }}
{{- end }}
group: {{ $group | quote }}
resource: {{ first $parts | quote }}
namespaced: true
{{- else }}
{{- fail (printf "%s: %q is not a Kubernetes resource the chart knows; name a custom resource by its plural and group, e.g. frigates.ship.nwiizo.dev" .where .name) }}
{{- end }}
{{- end }}

{{/* kube-annotator.grants: {groups: {group: [resources]} written cluster-wide, watched: {group: [resources]} written only in written: {namespace: {group: [resources]}}, watchNamespaces: bool, watchNodes: bool} as YAML. */}}
{{- define "kube-annotator.grants" -}}
{{- $table := .Files.Get "files/resources.yaml" | fromYaml }}
{{- $targets := list }}
{{- if not .Values.rules.existingConfigMap }}
{{- range $i, $rule := (include "kube-annotator.inlineRules" . | fromYaml).rules }}
{{- range $j, $name := $rule.resources }}
{{- $targets = append $targets (dict "name" $name "where" (printf "rules.inline.rules[%d].resources[%d]" $i $j) "selectsByNamespace" (not (empty (get $rule "namespaceSelector"))) "namespaces" (get $rule "namespaces" | default list)) }}
{{- end }}
{{- end }}
{{- else if and .Values.rbac.create (empty .Values.rbac.extraResources) }}
{{- fail (printf "rbac.extraResources: list the resources the rules in ConfigMap %q name (or set rbac.create=false and grant them yourself)" .Values.rules.existingConfigMap) }}
{{- end }}
{{- /* The chart cannot see whether these are selected by namespace labels: it grants what that needs. */}}
{{- range $i, $name := .Values.rbac.extraResources }}
{{- $targets = append $targets (dict "name" $name "where" (printf "rbac.extraResources[%d]" $i) "selectsByNamespace" true "namespaces" list) }}
{{- end }}
{{- /* A resource whose every rule names its namespaces literally (no glob) is written only there. */}}
{{- $scopes := dict }}
{{- $watchNamespaces := false }}
{{- range $targets }}
{{- $r := include "kube-annotator.resolve" (dict "name" .name "where" .where "table" $table) | fromYaml }}
{{- $k := printf "%s/%s" $r.group $r.resource }}
{{- $s := get $scopes $k | default (dict "group" $r.group "resource" $r.resource "cluster" false "namespaces" list) }}
{{- $confined := and $r.namespaced (not (empty .namespaces)) }}
{{- range .namespaces }}
{{- if regexMatch "[*?\\[\\\\]" . }}
{{- $confined = false }}
{{- end }}
{{- end }}
{{- if $confined }}
{{- $_ := set $s "namespaces" (concat $s.namespaces .namespaces | uniq) }}
{{- else }}
{{- $_ := set $s "cluster" true }}
{{- end }}
{{- $_ := set $scopes $k $s }}
{{- if or $r.namespaced .selectsByNamespace }}
{{- $watchNamespaces = true }}
{{- end }}
{{- end }}
{{- $groups := dict }}
{{- $watched := dict }}
{{- $written := dict }}
{{- range $s := $scopes }}
{{- if $s.cluster }}
{{- $_ := set $groups $s.group (append (index $groups $s.group | default list) $s.resource) }}
{{- else }}
{{- $_ := set $watched $s.group (append (index $watched $s.group | default list) $s.resource) }}
{{- range $ns := $s.namespaces }}
{{- $in := index $written $ns | default dict }}
{{- $_ := set $in $s.group (append (index $in $s.group | default list) $s.resource) }}
{{- $_ := set $written $ns $in }}
{{- end }}
{{- end }}
{{- end }}
{{- /* A value read from a Pod's Node (fromNode) needs the Nodes watched. */}}
{{- $watchNodes := false }}
{{- if not .Values.rules.existingConfigMap }}
{{- range $rule := (include "kube-annotator.inlineRules" . | fromYaml).rules }}
{{- range $field := list "annotations" "labels" }}
{{- range $key, $v := (get $rule $field | default dict) }}
{{- if and (kindIs "map" $v) (hasKey $v "fromNode") }}
{{- $watchNodes = true }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
groups: {{ toJson $groups }}
watched: {{ toJson $watched }}
written: {{ toJson $written }}
watchNamespaces: {{ $watchNamespaces }}
watchNodes: {{ $watchNodes }}
{{- end }}

{{/* kube-annotator.clusterRules: per API group, get, list, watch and patch on the resources written cluster-wide, then list and watch on those written only in some namespaces; then namespaces, nodes, events, admission policies. */}}
{{- define "kube-annotator.clusterRules" -}}
{{- $grants := include "kube-annotator.grants" . | fromYaml }}
{{- range $group := concat (keys $grants.groups) (keys $grants.watched) | uniq | sortAlpha }}
{{- with index $grants.groups $group }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ . | uniq | sortAlpha | toJson }}
  verbs: [get, list, watch, patch]
{{- end }}
{{- with index $grants.watched $group }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ . | uniq | sortAlpha | toJson }}
  verbs: [list, watch]
{{- end }}
{{- end }}
{{- if and $grants.watchNamespaces (not (has "namespaces" (index $grants.groups "" | default list))) }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end }}
{{- if and $grants.watchNodes (not (has "nodes" (index $grants.groups "" | default list))) }}
- apiGroups: [""]
  resources: [nodes]
  verbs: [list, watch]
{{- end }}
{{- if .Values.events }}
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
{{- if .Values.admissionPolicies.enabled }}
- apiGroups: [admissionregistration.k8s.io]
  resources: [mutatingadmissionpolicies, mutatingadmissionpolicybindings]
  verbs: [list, create, patch, delete]
{{- end }}
{{- end }}

{{/* kube-annotator.roleRules: in the release's namespace, the record's ConfigMap and the Leases of leader election or of the shard group. */}}
{{- define "kube-annotator.roleRules" -}}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [create]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [{{ printf "%s-resources" .Values.fieldManager | quote }}]
  verbs: [get, update]
{{- if eq .Values.sharding.mode "none" }}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [{{ include "kube-annotator.leaseName" . | quote }}]
  verbs: [get, update]
{{- else if eq .Values.sharding.mode "group" }}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create, get, list, watch, update, delete]
{{- end }}
{{- include "kube-annotator.writtenRules" (dict "root" . "namespace" .Release.Namespace) }}
{{- end }}

{{/* kube-annotator.writtenNamespaces: the namespaces, other than the release's, where resources are written without a cluster-wide grant, as a JSON list. */}}
{{- define "kube-annotator.writtenNamespaces" -}}
{{- $grants := include "kube-annotator.grants" . | fromYaml }}
{{- without (keys $grants.written | sortAlpha) .Release.Namespace | toJson }}
{{- end }}

{{/* kube-annotator.writtenRules: dict root, namespace -> get and patch on the resources written only in some namespaces, in namespace, one rule per API group. */}}
{{- define "kube-annotator.writtenRules" -}}
{{- $grants := include "kube-annotator.grants" .root | fromYaml }}
{{- $in := index $grants.written .namespace | default dict }}
{{- range $group := keys $in | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ index $in $group | uniq | sortAlpha | toJson }}
  verbs: [get, patch]
{{- end }}
{{- end }}
