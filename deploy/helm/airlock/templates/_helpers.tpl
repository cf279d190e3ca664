{{- define "airlock.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "airlock.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "airlock.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/name: {{ include "airlock.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "airlock.selector" -}}
app.kubernetes.io/name: {{ include "airlock.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "airlock.mirrorSelector" -}}
app.kubernetes.io/name: {{ include "airlock.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: mirror
{{- end -}}

{{- define "airlock.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end -}}

{{/* The trust keys volume source: an existing Secret, an existing ConfigMap, or the chart's own ConfigMap. */}}
{{- define "airlock.trustVolume" -}}
{{- if .Values.trust.existingSecret }}
secret:
  secretName: {{ .Values.trust.existingSecret }}
{{- else if .Values.trust.existingConfigMap }}
configMap:
  name: {{ .Values.trust.existingConfigMap }}
{{- else }}
configMap:
  name: {{ include "airlock.fullname" . }}-trust
{{- end }}
{{- end -}}

{{- define "airlock.hasTrust" -}}
{{- if or .Values.trust.existingSecret .Values.trust.existingConfigMap .Values.trust.keys }}true{{ end -}}
{{- end -}}

{{/* The mirror a follower polls: follow.url, else this release's own mirror Service. */}}
{{- define "airlock.followUrl" -}}
{{- if .Values.follow.url -}}
{{ .Values.follow.url }}
{{- else if .Values.mirror.enabled -}}
{{ printf "http://%s.%s.svc" (printf "%s-mirror" (include "airlock.fullname" .) | trunc 63 | trimSuffix "-") .Release.Namespace }}
{{- else -}}
{{ fail "follow.enabled needs follow.url, or mirror.enabled for this release's own mirror" }}
{{- end -}}
{{- end -}}
