{{/*
Named templates. The ones users may include from their own charts take a context with
.Values (this chart's values), .Release and, for the Kubernetes version check of sidecar.mode,
.Capabilities, e.g. from a parent chart that depends on this one:
  {{ include "spark-exporter.sidecar" (dict "Values" (index .Values "spark-exporter") "Release" .Release "Capabilities" .Capabilities) }}
They use nothing else (no .Chart), so such a dict is enough; without Capabilities the check is
skipped and sidecar.mode=auto fails (see "spark-exporter.mode").
*/}}

{{/* Resource name prefix: <release>-spark-exporter, or the release name if it contains it. */}}
{{- define "spark-exporter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "spark-exporter" .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of the ConfigMap holding config.yaml. */}}
{{- define "spark-exporter.configMapName" -}}
{{- if .Values.sidecar.configMapName -}}
{{- .Values.sidecar.configMapName -}}
{{- else -}}
{{- printf "%s-config" (include "spark-exporter.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* A label map as "k=v, k=v", for NOTES. */}}
{{- define "spark-exporter.labelList" -}}
{{- $out := list -}}
{{- range $k, $v := . }}{{ $out = append $out (printf "%s=%s" $k $v) }}{{ end -}}
{{- join ", " $out -}}
{{- end -}}

{{/* Labels of the chart's own resources. */}}
{{- define "spark-exporter.labels" -}}
app.kubernetes.io/name: {{ default "spark-exporter" .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Values.image.tag | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The sidecar mode in effect, "native" or "classic", from sidecar.mode and the Kubernetes version
(.Capabilities.KubeVersion: the cluster's on install and upgrade, --kube-version or helm's
default for helm template; helm lint only logs a `fail`). Native sidecars (init containers with restartPolicy: Always) are on by
default from Kubernetes 1.29. Below that the API server drops restartPolicy, the exporter
becomes a plain init container that never exits, the driver container never starts and the pod
never completes. So:
  native   native; FAILS the rendering below 1.29, with a message naming classic and auto
  classic  classic, on any version
  auto     native from 1.29, classic below
A context without .Capabilities (a parent chart's dict with only Values and Release) cannot be
checked: native and classic are taken as they are, auto fails and asks for the Capabilities.
*/}}
{{- define "spark-exporter.mode" -}}
{{- $mode := .Values.sidecar.mode -}}
{{- if not (has $mode (list "native" "classic" "auto")) -}}
{{- fail (printf "sidecar.mode must be native, classic or auto, not %q" (toString $mode)) -}}
{{- end -}}
{{- $kube := "" -}}
{{- with .Capabilities }}{{ $kube = .KubeVersion.Version }}{{ end -}}
{{- $nativeOk := or (not $kube) (semverCompare ">=1.29.0-0" $kube) -}}
{{- if eq $mode "auto" -}}
{{- if not $kube -}}
{{- fail `sidecar.mode=auto needs the Kubernetes version: add "Capabilities" $.Capabilities to the dict you include spark-exporter's templates with, or set sidecar.mode to native or classic` -}}
{{- end -}}
{{- ternary "native" "classic" $nativeOk -}}
{{- else if and (eq $mode "native") (not $nativeOk) -}}
{{- fail (printf "sidecar.mode=native needs Kubernetes 1.29 or newer, and this cluster is %s: below 1.29 the API server drops the init container's restartPolicy: Always, so the exporter would run as a plain init container that never exits, the driver would never start and the pod would never complete. Set sidecar.mode=classic (or auto, which picks classic below 1.29 and native from 1.29); classic needs --conf spark.kubernetes.driver.podTemplateContainerName=%s" $kube .Values.podTemplate.driverContainerName) -}}
{{- else -}}
{{- $mode -}}
{{- end -}}
{{- end -}}

{{/*
The exporter container as ONE LIST ITEM ("- name: spark-exporter ..."): put it under
spec.initContainers in `native` mode (it carries restartPolicy: Always, Kubernetes 1.29+), or
under spec.containers in `classic` mode, where it gets --lifecycle.exit-when-app-ends and ends
by itself after the application (see deploy/kubernetes/driver-pod-template-classic.yaml), e.g.
  initContainers:
    {{- include "spark-exporter.sidecar" $ctx | nindent 4 }}
Which mode is "spark-exporter.mode" (sidecar.mode, resolved against the Kubernetes version).
*/}}
{{- define "spark-exporter.sidecar" -}}
{{- include "spark-exporter.container" . | indent 2 | trimPrefix "  " | printf "- %s" -}}
{{- end -}}

{{/* The exporter container as a mapping (what "spark-exporter.sidecar" lists). */}}
{{- define "spark-exporter.container" -}}
{{- $s := .Values.sidecar -}}
{{- $mode := include "spark-exporter.mode" . -}}
name: {{ $s.name }}
image: {{ printf "%s:%s" .Values.image.repository .Values.image.tag | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
{{- if eq $mode "native" }}
restartPolicy: Always
{{- end }}
args:
  - --config.file=/etc/spark-exporter/config.yaml
{{- if eq $mode "classic" }}
  - --lifecycle.exit-when-app-ends
{{- end }}
{{- range $s.extraArgs }}
  - {{ . | quote }}
{{- end }}
{{- with $s.env }}
env:
  {{- toYaml . | nindent 2 }}
{{- end }}
ports:
  - name: metrics
    containerPort: {{ $s.port }}
    protocol: TCP
livenessProbe:
  httpGet:
    path: /healthz
    port: metrics
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
{{- if $s.readinessProbe.enabled }}
readinessProbe:
  httpGet:
    path: /readyz
    port: metrics
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 3
{{- end }}
resources:
  {{- toYaml $s.resources | nindent 2 }}
securityContext:
  {{- toYaml $s.securityContext | nindent 2 }}
volumeMounts:
  - name: spark-events
    mountPath: {{ $s.eventLogDir }}
    readOnly: true
  - name: spark-exporter-config
    mountPath: /etc/spark-exporter
    readOnly: true
  - name: spark-exporter-tmp
    mountPath: /tmp
{{- end -}}

{{/* The pod volumes the sidecar needs, as list items. */}}
{{- define "spark-exporter.volumes" -}}
- name: spark-events
  {{- with .Values.sidecar.eventLogVolume }}
  {{- toYaml . | nindent 2 }}
  {{- else }}
  emptyDir:
    sizeLimit: {{ .Values.sidecar.eventLogSizeLimit }}
  {{- end }}
- name: spark-exporter-config
  configMap:
    name: {{ include "spark-exporter.configMapName" . }}
- name: spark-exporter-tmp
  emptyDir:
    sizeLimit: {{ .Values.sidecar.tmpSizeLimit }}
{{- end -}}

{{/* The driver container's part, as one list item: the event-log mount. */}}
{{- define "spark-exporter.driverContainer" -}}
- name: {{ .Values.podTemplate.driverContainerName }}
  volumeMounts:
    - name: spark-events
      mountPath: {{ .Values.sidecar.eventLogDir }}
{{- end -}}

{{/* A whole driver pod template for spark.kubernetes.driver.podTemplateFile. */}}
{{- define "spark-exporter.podTemplate" -}}
{{- include "spark-exporter.checkGracePeriod" . -}}
apiVersion: v1
kind: Pod
metadata:
  {{- with .Values.podTemplate.labels }}
  labels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if .Values.podTemplate.prometheusAnnotations }}
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: {{ .Values.sidecar.port | quote }}
    prometheus.io/path: {{ .Values.config.web.telemetry_path | default "/metrics" }}
  {{- end }}
spec:
  {{- with .Values.podTemplate.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.podTemplate.terminationGracePeriodSeconds }}
  terminationGracePeriodSeconds: {{ int . }}
  {{- end }}
  {{- if eq (include "spark-exporter.mode" .) "native" }}
  initContainers:
    {{- include "spark-exporter.sidecar" . | nindent 4 }}
  containers:
    {{- include "spark-exporter.driverContainer" . | nindent 4 }}
  {{- else }}
  containers:
    {{- include "spark-exporter.driverContainer" . | nindent 4 }}
    {{- include "spark-exporter.sidecar" . | nindent 4 }}
  {{- end }}
  volumes:
    {{- include "spark-exporter.volumes" . | nindent 4 }}
{{- end -}}

{{/*
config.lifecycle.grace_period in seconds, when it is written as
[<n>h][<n>m][<n>s] (e.g. 25s, 1m30s); empty for any other humantime form, which the
grace checks below then skip. Unset means the exporter's default, 25s.
*/}}
{{- define "spark-exporter.gracePeriodSeconds" -}}
{{- include "spark-exporter.graceSecondsOf" .Values.config -}}
{{- end -}}

{{/* The same for any config.yaml mapping (the fleet's is config merged with fleet.config). */}}
{{- define "spark-exporter.graceSecondsOf" -}}
{{- $g := "25s" -}}
{{- with . -}}{{- with .lifecycle -}}{{- with .grace_period -}}{{- $g = toString . -}}{{- end -}}{{- end -}}{{- end -}}
{{- $re := "^(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$" -}}
{{- if and $g (regexMatch $re $g) -}}
{{- $h := regexReplaceAll $re $g "${1}" | default "0" | atoi -}}
{{- $m := regexReplaceAll $re $g "${2}" | default "0" | atoi -}}
{{- $sec := regexReplaceAll $re $g "${3}" | default "0" | atoi -}}
{{- add (mul $h 3600) (mul $m 60) $sec -}}
{{- end -}}
{{- end -}}

{{/*
Fails the rendering when the pod's terminationGracePeriodSeconds (the kubelet's 30 when unset)
does not exceed the exporter's drain grace period: the kubelet would kill the drain.
*/}}
{{- define "spark-exporter.checkGracePeriod" -}}
{{- $grace := include "spark-exporter.gracePeriodSeconds" . -}}
{{- $pod := .Values.podTemplate.terminationGracePeriodSeconds | default 30 | int -}}
{{- if and $grace (le $pod (atoi $grace)) -}}
{{- fail (printf "podTemplate.terminationGracePeriodSeconds (%d) must exceed config.lifecycle.grace_period (%ss): the kubelet would kill the exporter before its drain ends" $pod $grace) -}}
{{- end -}}
{{- end -}}

{{/* ---- What the release deploys (mode) ----------------------------------------------- */}}

{{/* `mode` checked: sidecar, fleet or both (the schema refuses others first; a parent chart's
dict may skip the schema). Without a mode (an older parent chart's values): sidecar. */}}
{{- define "spark-exporter.deploys" -}}
{{- $m := .Values.mode | default "sidecar" -}}
{{- if not (has $m (list "sidecar" "fleet" "both")) -}}
{{- fail (printf "mode must be sidecar, fleet or both, not %q" (toString $m)) -}}
{{- end -}}
{{- $m -}}
{{- end -}}

{{/* "true" when the release deploys the sidecar's objects, else empty. */}}
{{- define "spark-exporter.sidecarEnabled" -}}
{{- if ne (include "spark-exporter.deploys" .) "fleet" }}true{{ end -}}
{{- end -}}

{{/* "true" when the release deploys the fleet, else empty. */}}
{{- define "spark-exporter.fleetEnabled" -}}
{{- if ne (include "spark-exporter.deploys" .) "sidecar" }}true{{ end -}}
{{- end -}}

{{/* ---- Fleet mode ----------------------------------------------------------------------- */}}

{{/* Name of the fleet's StatefulSet, Service, PodMonitor and ServiceAccount. At most 52
characters: the StatefulSet controller labels each pod with <name>-<10-character hash>, and
a label value holds 63. Pods are <name>-0 ... <name>-<shards-1>. */}}
{{- define "spark-exporter.fleetName" -}}
{{- printf "%s-fleet" (include "spark-exporter.fullname" . | trunc 46 | trimSuffix "-") -}}
{{- end -}}

{{/* Name of the fleet's config ConfigMap. */}}
{{- define "spark-exporter.fleetConfigMapName" -}}
{{- printf "%s-config" (include "spark-exporter.fleetName" .) -}}
{{- end -}}

{{/* Labels that select the fleet's pods (StatefulSet selector, Service, PodMonitor). */}}
{{- define "spark-exporter.fleetSelectorLabels" -}}
app.kubernetes.io/name: {{ default "spark-exporter" .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: fleet
{{- end -}}

{{/* The fleet's ServiceAccount name. */}}
{{- define "spark-exporter.fleetServiceAccountName" -}}
{{- $sa := .Values.fleet.serviceAccount -}}
{{- if $sa.create -}}
{{- $sa.name | default (include "spark-exporter.fleetName" .) -}}
{{- else -}}
{{- $sa.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/*
Deep merge for config overlays: (dict "base" b "over" o) -> YAML of b with o merged over it,
mapping by mapping; any other value of o (a list, a string, 0, false, "") replaces b's. Sprig's
mergeOverwrite would keep b's value where o's is empty or false.
*/}}
{{- define "spark-exporter.deepMerge" -}}
{{- $out := deepCopy (.base | default dict) -}}
{{- range $k, $v := (.over | default dict) -}}
{{- $cur := index $out $k -}}
{{- if and (kindIs "map" $v) (kindIs "map" $cur) -}}
{{- $_ := set $out $k (include "spark-exporter.deepMerge" (dict "base" $cur "over" $v) | fromYaml) -}}
{{- else -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* The fleet's config.yaml as YAML: config with fleet.config merged over it, without
event_log.dirs and spark.urls (the fleet's flags give them). */}}
{{- define "spark-exporter.fleetConfig" -}}
{{- $cfg := include "spark-exporter.deepMerge" (dict "base" .Values.config "over" .Values.fleet.config) | fromYaml -}}
{{- with $cfg.event_log }}{{ $_ := unset . "dirs" }}{{ end -}}
{{- with $cfg.spark }}{{ $_ := unset . "urls" }}{{ end -}}
{{- range $k, $v := $cfg }}{{ if and (kindIs "map" $v) (not $v) }}{{ $_ := unset $cfg $k }}{{ end }}{{ end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The port of the fleet's config web.listen_address (default 9809). */}}
{{- define "spark-exporter.fleetPort" -}}
{{- $cfg := include "spark-exporter.fleetConfig" . | fromYaml -}}
{{- $addr := "0.0.0.0:9809" -}}
{{- with $cfg.web }}{{ with .listen_address }}{{ $addr = toString . }}{{ end }}{{ end -}}
{{- regexFind "[0-9]+$" $addr -}}
{{- end -}}

{{/* The fleet's telemetry path. */}}
{{- define "spark-exporter.fleetPath" -}}
{{- $cfg := include "spark-exporter.fleetConfig" . | fromYaml -}}
{{- $p := "/metrics" -}}
{{- with $cfg.web }}{{ with .telemetry_path }}{{ $p = . }}{{ end }}{{ end -}}
{{- $p -}}
{{- end -}}

{{/*
Fails the rendering when the fleet could not work: no event-log store; a local path outside
the mounted volume, or no volume for it; both a claim and a hostPath; a
terminationGracePeriodSeconds that does not exceed the fleet's drain grace period.
*/}}
{{- define "spark-exporter.checkFleet" -}}
{{- $f := .Values.fleet -}}
{{- if not $f.eventLogDirs -}}
{{- fail `fleet mode needs fleet.eventLogDirs: the event-log stores to read, e.g. --set-json 'fleet.eventLogDirs=["s3://bucket/spark-events"]', or a path under fleet.eventLogVolume.mountPath with fleet.eventLogVolume.existingClaim or .hostPath` -}}
{{- end -}}
{{- $v := $f.eventLogVolume -}}
{{- if and $v.existingClaim $v.hostPath -}}
{{- fail "fleet.eventLogVolume: set existingClaim or hostPath, not both" -}}
{{- end -}}
{{- $mount := trimSuffix "/" $v.mountPath -}}
{{- range $f.eventLogDirs -}}
{{- $d := toString . -}}
{{- if or (hasPrefix "file://" $d) (not (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://" $d)) -}}
{{- $p := trimPrefix "file://" $d -}}
{{- if not (or (eq (trimSuffix "/" $p) $mount) (hasPrefix (printf "%s/" $mount) $p)) -}}
{{- fail (printf "fleet.eventLogDirs: %s is a local path outside fleet.eventLogVolume.mountPath (%s), where the event-log volume is mounted" $d $v.mountPath) -}}
{{- end -}}
{{- if not (or $v.existingClaim $v.hostPath) -}}
{{- fail (printf "fleet.eventLogDirs: %s is a local path, and no volume is mounted at %s: set fleet.eventLogVolume.existingClaim (a PVC holding the event logs) or fleet.eventLogVolume.hostPath" $d $v.mountPath) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $grace := include "spark-exporter.graceSecondsOf" (include "spark-exporter.fleetConfig" . | fromYaml) -}}
{{- $pod := $f.terminationGracePeriodSeconds | default 30 | int -}}
{{- if and $grace (le $pod (atoi $grace)) -}}
{{- fail (printf "fleet.terminationGracePeriodSeconds (%d) must exceed the fleet's lifecycle.grace_period (%ss, config merged with fleet.config): the kubelet would kill the exporter before its drain ends" $pod $grace) -}}
{{- end -}}
{{- end -}}

{{/* Whether the fleet mounts a local event-log volume: "true" or empty. */}}
{{- define "spark-exporter.fleetHasVolume" -}}
{{- with .Values.fleet.eventLogVolume }}{{ if or .existingClaim .hostPath }}true{{ end }}{{ end -}}
{{- end -}}
