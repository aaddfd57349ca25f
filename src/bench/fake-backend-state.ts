/** What a fake backend has seen, for assertions. */
export interface BackendState {
  /** Requests inside the server now (running plus waiting). */
  inflight: number;
  /** The most requests it ever held at once. */
  peakInflight: number;
  served: number;
  /** Requests refused for a missing or wrong API key. */
  unauthorized: number;
  metricsReads: number;
  /** The `Authorization` header of the last completion request. */
  lastAuthorization: string | null;
}
