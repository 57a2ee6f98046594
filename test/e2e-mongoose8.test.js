'use strict';
// The end-to-end suite (test/e2e.test.js) with mongoose 8.x, its mongodb 6.x
// and bson 6.x: same workload, same server, results with and without bson-rs equal.
process.env.BSON_RS_E2E_STACK = 'mongoose8';
require('./e2e.test.js');
