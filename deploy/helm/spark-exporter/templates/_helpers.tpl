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
{{- printf "%s-config" (include "spark-exporter.fullname" .) | trunc 63 | trimSuffix "-" -}}
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
grace check below then skips. Unset means the exporter's default, 25s.
*/}}
{{- define "spark-exporter.gracePeriodSeconds" -}}
{{- $g := "25s" -}}
{{- with .Values.config -}}{{- with .lifecycle -}}{{- with .grace_period -}}{{- $g = toString . -}}{{- end -}}{{- end -}}{{- end -}}
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
