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
  secretName: {{ .Values.trust.existingSecret | quote }}
{{- else if .Values.trust.existingConfigMap }}
configMap:
  name: {{ .Values.trust.existingConfigMap | quote }}
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

{{/*
What every replica starts from, checked before anything is applied: each replica's store is an
empty volume, so a release without a bundle (and not following a mirror) would only render pods
that exit with nothing to serve, and a bundle airlock serve would refuse (a raw export without
allowUnsigned, a package with no key to check it against) pods that crash-loop.
*/}}
{{- define "airlock.checkSource" -}}
{{- $se := .Values.staticExport -}}
{{- $trusted := include "airlock.hasTrust" . -}}
{{- if .Values.library.sites -}}
{{- include "airlock.checkLibrary" . -}}
{{- else if .Values.follow.enabled -}}
{{- $_ := include "airlock.followUrl" . -}}
{{- if not (or $trusted .Values.follow.allowUnsigned) -}}
{{- fail "the packages a mirror hands out are checked against trust keys: set trust.existingSecret, trust.existingConfigMap or trust.keys (the *.pub keys that sign them), or follow.allowUnsigned=true for unsigned packages" -}}
{{- end -}}
{{- else -}}
{{- if not (and $se.enabled $se.bundleUrl) -}}
{{- fail "staticExport.bundleUrl is required: each replica's store starts empty and is filled from that URL at start-up (a signed .airlock package with its keys in trust.*, or a raw export archive with staticExport.allowUnsigned=true); or set follow.enabled to follow an in-network mirror" -}}
{{- end -}}
{{- with include "airlock.urlProblem" $se.bundleUrl -}}
{{- fail (printf "staticExport.bundleUrl %s" .) -}}
{{- end -}}
{{- $path := lower (urlParse $se.bundleUrl).path -}}
{{- if and (regexMatch "\\.(tar\\.gz|tgz|tar|zip)$" $path) (not $se.allowUnsigned) -}}
{{- fail (printf "staticExport.bundleUrl %s is a raw export archive, unsigned by nature, and airlock serve refuses it unless told: set staticExport.allowUnsigned=true to accept it on TLS and the link's size/digest checks, or serve a signed .airlock package with its keys in trust.*" (base $path)) -}}
{{- end -}}
{{- if not (or $trusted $se.allowUnsigned) -}}
{{- fail "a signed package is checked against trust keys: set trust.existingSecret, trust.existingConfigMap or trust.keys (the *.pub keys that sign it), or staticExport.allowUnsigned=true for an unsigned bundle" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A library (library.sites): every site starts from its own bundle, checked as one store's is; a
release airlock serve --library would refuse or could not fill is refused here, naming the site.
*/}}
{{- define "airlock.checkLibrary" -}}
{{- $v := .Values -}}
{{- range $k, $on := dict "follow.enabled" $v.follow.enabled "mirror.enabled" $v.mirror.enabled "tls.secretName" $v.tls.secretName "basePath" $v.basePath -}}
{{- if $on -}}
{{- fail (printf "%s is for one site's release; a library (library.sites) does not take it: serve that site with a release of its own" $k) -}}
{{- end -}}
{{- end -}}
{{- if $v.staticExport.bundleUrl -}}
{{- fail "staticExport.bundleUrl is one site's bundle; a library (library.sites) gives each site its own bundleUrl: remove staticExport.bundleUrl" -}}
{{- end -}}
{{- if and (eq $v.deployment.type "cloud") (or (ne (toString (dig "search" "" $v.features)) "false") (ne (toString (dig "assistant" "" $v.features)) "false")) -}}
{{- fail "deployment.type cloud turns search and assistant on, and a library relays nothing to the service: set features.search=false and features.assistant=false, or another deployment.type" -}}
{{- end -}}
{{- $seen := dict -}}
{{- $hosts := dict -}}
{{- range $i, $site := $v.library.sites -}}
{{- $where := printf "library.sites[%d] (%s)" $i $site.domain -}}
{{- if regexMatch "^[0-9.]+$" $site.domain -}}
{{- fail (printf "%s: the domain is an address, not a site's host name" $where) -}}
{{- end -}}
{{- with include "airlock.urlProblem" $site.bundleUrl -}}
{{- fail (printf "%s: bundleUrl %s" $where .) -}}
{{- end -}}
{{- if or (dig "search" false ($site.features | default dict)) (dig "assistant" false ($site.features | default dict)) -}}
{{- fail (printf "%s: search and assistant would be relayed to the service, which a library does not do: leave them off" $where) -}}
{{- end -}}
{{- range $site.hosts -}}
{{- $h := lower (trimSuffix "." .) -}}
{{- if or (not (regexMatch "^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$" $h)) (regexMatch "^[0-9.]+$" $h) (eq $h "localhost") (hasSuffix ".localhost" $h) -}}
{{- fail (printf "%s: hosts: %s is not a host name of a site (an address of the server, or not a name)" $where .) -}}
{{- end -}}
{{- if hasKey $hosts $h -}}
{{- fail (printf "%s: hosts: %s is given to %s already" $where $h (get $hosts $h)) -}}
{{- end -}}
{{- $_ := set $hosts $h $site.domain -}}
{{- end -}}
{{- if hasKey $seen $site.domain -}}
{{- fail (printf "%s: the domain is listed twice" $where) -}}
{{- end -}}
{{- $_ := set $seen $site.domain true -}}
{{- $path := lower (urlParse $site.bundleUrl).path -}}
{{- if and (regexMatch "\\.(tar\\.gz|tgz|tar|zip)$" $path) (not $site.allowUnsigned) -}}
{{- fail (printf "%s: bundleUrl %s is a raw export archive, unsigned by nature: set allowUnsigned=true for it, or serve a signed .airlock package with trustKeys" $where (base $path)) -}}
{{- end -}}
{{- if not (or $site.trustKeys $site.allowUnsigned) -}}
{{- fail (printf "%s: a signed package is checked against keys: name them in trustKeys (files of trust.*), or set allowUnsigned=true" $where) -}}
{{- end -}}
{{- if and $site.trustKeys (not (include "airlock.hasTrust" $)) -}}
{{- fail (printf "%s: trustKeys name keys of trust.*: set trust.existingSecret, trust.existingConfigMap or trust.keys" $where) -}}
{{- end -}}
{{- if $v.trust.keys -}}
{{- range $site.trustKeys -}}
{{- if not (hasKey $v.trust.keys .) -}}
{{- fail (printf "%s: trustKeys names %s, which trust.keys does not hold" $where .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
What is wrong with a bundle URL that airlock serve would refuse at start (the pod would crash-loop),
or "" when nothing is: not http(s), or a port that is not a number up to 65535 (the URL parser's
rule; a host name it accepts is left to the download).
*/}}
{{- define "airlock.urlProblem" -}}
{{- $u := . | default "" -}}
{{- if not (regexMatch "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]+" $u) -}}
must be an http(s) URL
{{- else if regexMatch "[\\s\\\\\\x00-\\x1f\\x7f]" $u -}}
has a space, a backslash or a control character, which a URL does not
{{- else if regexMatch "%([^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|[0-9A-Fa-f]?$)" $u -}}
has a % that starts no percent-escape (write it %25)
{{- else -}}
{{- $authority := regexReplaceAll "^[^:]+://([^/?#]*@)?([^/?#]*).*$" $u "${2}" -}}
{{- $host := lower (trimSuffix "." (regexReplaceAll "^(\\[[^\\]]*\\]|[^:]*).*$" $authority "${1}")) -}}
{{- $port := regexReplaceAll "^(\\[[^\\]]*\\]|[^:]*):?" $authority "" -}}
{{- $labels := splitList "." $host -}}
{{- $number := "^([0-9]+|0x[0-9a-f]*)$" -}}
{{- if hasPrefix "[" $host -}}
{{- if not (regexMatch "^\\[[0-9a-f:.]+\\]$" $host) -}}
has a host in brackets that is no IPv6 address (a zone such as %25eth0 is not allowed in a URL)
{{- end -}}
{{- else if contains "%" $host -}}
has a percent-escape in its host name: write the name itself
{{- else if regexMatch $number (last $labels) -}}
{{- $ipv4 := true -}}
{{- range $labels -}}
{{- if or (not (regexMatch $number .)) (and (regexMatch "^[0-9]+$" .) (eq (len $labels) 4) (gt (len .) 3)) (and (regexMatch "^[0-9]+$" .) (eq (len $labels) 4) (gt (atoi .) 255)) -}}
{{- $ipv4 = false -}}
{{- end -}}
{{- end -}}
{{- if or (not $ipv4) (gt (len $labels) 4) -}}
has a host that ends in a number but is no IPv4 address
{{- end -}}
{{- else if has "xn--" $labels -}}
has an empty punycode label (xn--) in its host name
{{- end -}}
{{- if and (ne $port "") (or (not (regexMatch "^[0-9]+$" $port)) (gt (len $port) 5) (gt (atoi $port) 65535)) -}}
has a port that is no number from 0 to 65535
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
local-assistant's model (localAssistant.model), checked as airlock serve checks it at start, so a
release whose pods would exit 2 is refused here, naming the key: url and name go together; the
url is an http(s) base URL without credentials (the key goes in keySecret), query or fragment;
local-assistant on needs a model; the service's assistant on too would answer the same endpoint;
a library (library.sites) does not answer it.
*/}}
{{- define "airlock.checkModel" -}}
{{- $v := .Values -}}
{{- $m := (dig "model" dict ($v.localAssistant | default dict)) -}}
{{- $url := $m.url | default "" -}}
{{- $name := $m.name | default "" -}}
{{- $la := toString (dig "local-assistant" "" ($v.features | default dict)) -}}
{{- if $v.library.sites -}}
{{- range $k := list "url" "name" "keySecret" -}}
{{- if get $m $k -}}
{{- fail (printf "localAssistant.model.%s: local-assistant answers on one site's server; a library (library.sites) does not answer it: leave localAssistant.model unset, or serve that site with a release of its own" $k) -}}
{{- end -}}
{{- end -}}
{{- if eq $la "true" -}}
{{- fail "features.local-assistant=true: a library (library.sites) does not answer local-assistant: leave it off, or serve that site with a release of its own" -}}
{{- end -}}
{{- else -}}
{{- if and $url (not $name) -}}
{{- fail "localAssistant.model.url needs localAssistant.model.name (they go together: the model server, and the model it should run)" -}}
{{- end -}}
{{- if and $name (not $url) -}}
{{- fail "localAssistant.model.name needs localAssistant.model.url (they go together: the model server, and the model it should run)" -}}
{{- end -}}
{{- if and $m.keySecret (not $url) -}}
{{- fail "localAssistant.model.keySecret is the key of a model: set localAssistant.model.url and localAssistant.model.name too" -}}
{{- end -}}
{{- if and (eq $la "true") (not $url) -}}
{{- fail "features.local-assistant=true answers with a model your network runs: set localAssistant.model.url and localAssistant.model.name" -}}
{{- end -}}
{{- if $url -}}
{{- with include "airlock.urlProblem" $url -}}
{{- fail (printf "localAssistant.model.url %s" .) -}}
{{- end -}}
{{- if regexMatch "^[^:]+://[^/?#]*@" $url -}}
{{- fail "localAssistant.model.url has credentials (user:password@): the model server's key goes in a Secret named by localAssistant.model.keySecret" -}}
{{- end -}}
{{- if regexMatch "^[^:]+://[^/?#]*:0*(/|$)" $url -}}
{{- fail "localAssistant.model.url has port 0, which no model server listens on: give the port it listens on, or none for the scheme's" -}}
{{- end -}}
{{- if regexMatch "[?#]" $url -}}
{{- fail "localAssistant.model.url has a query or fragment: give the model server's base URL (such as http://vllm.models.svc:8000/v1); a key goes in a Secret named by localAssistant.model.keySecret" -}}
{{- end -}}
{{- $assistant := toString (dig "assistant" "" ($v.features | default dict)) -}}
{{- if and (ne $la "false") (or (eq $assistant "true") (and (eq $v.deployment.type "cloud") (ne $assistant "false"))) -}}
{{- fail "the service's assistant is on (relayed) and so is local-assistant (localAssistant.model): both would answer the same endpoint; set features.assistant=false or features.local-assistant=false" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* local-assistant's model URL ("" when none), and the Secret holding its key ("" when none). */}}
{{- define "airlock.modelUrl" -}}
{{- dig "model" "url" "" (.Values.localAssistant | default dict) -}}
{{- end -}}

{{- define "airlock.modelKeySecret" -}}
{{- if and (include "airlock.modelUrl" .) (not .Values.library.sites) -}}
{{- dig "model" "keySecret" "" (.Values.localAssistant | default dict) -}}
{{- end -}}
{{- end -}}
