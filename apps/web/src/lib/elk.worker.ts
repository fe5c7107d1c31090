/**
 * The ELK layout worker: elkjs's worker build installs its own message dispatcher on
 * `self` (the protocol elk-api speaks), so layout runs off the main thread.
 */
import "elkjs/lib/elk-worker.min.js";
