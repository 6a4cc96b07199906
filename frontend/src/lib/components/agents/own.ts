/**
 * The server id of Airlock's own tools (authz.Server): they are decided by
 * permission level and session purpose, not by role grants, so the grant
 * editors leave them out (as Agents.Access does).
 */
export const OWN_SERVER = 'airlock';
