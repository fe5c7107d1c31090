/**
 * JSON values as tools and the data store pass them (plain data, no class instances).
 */

/** A JSON value (what crosses tool boundaries). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonRecord = { [key: string]: Json };
