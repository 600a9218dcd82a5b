# Sourced by the installers (code-server-setup.sh, node24-setup.sh) before they run npm.
#
# `npm start` and `npm test` export their npm's whole configuration to every child as npm_config_*
# variables, and an npm started below them reads those as its own configuration. Among them is
# npm_config_user_agent ("npm/10 node/v20 …"): code-server 4.139.1's postinstall reads the Node
# major from it and refuses anything but 24, so `npm ci && npm start` on a fresh machine stopped
# with "code-server currently requires node v24. We have detected that you are on node v20".
# An installer's npm must see what a person typing the command sees: its own defaults, the
# machine's ~/.npmrc and the variables the installer sets itself (after this, on purpose).
for _npm_var in $(compgen -e); do
  case "${_npm_var,,}" in npm_config_*) unset "$_npm_var" ;; esac
done
unset _npm_var
