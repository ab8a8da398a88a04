// The Agent Host bridge's extension: what it activates with is the bridge (bridge.js), for the
// agent-host host suite to start and to list models through.
'use strict';
const bridge = require('./bridge');

module.exports = { activate: () => bridge, deactivate() {} };
