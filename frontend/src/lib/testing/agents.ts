// Agents, roles and backend answers for the Agents and Built-in tools tests.
import type { AgentView, BuiltinSettings, Overview, Role } from '../api';

export function agentView(id: string, name: string, kind: string, parentId: string | undefined, more: Partial<AgentView> = {}): AgentView {
  return {
    id, name, kind, human: false, parentId, status: 'active', role: 'default', compact: false, projects: [], disabledTools: [],
    createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', tokens: [], ...more,
  };
}

export function role(name: string, more: Partial<Role> = {}): Role {
  return { name, description: '', isDefault: false, isSuperuser: false, servers: [], tools: [], createdAt: '', updatedAt: '', ...more };
}

export function builtinSettings(more: Partial<BuiltinSettings> = {}): BuiltinSettings {
  return {
    roots: [], off: [], deny: ['rm {-r,--recursive} {-f,--force}'], ask: ['{sudo,su}'], envAllow: ['PATH', 'HOME'],
    shellTimeoutSeconds: 60, outputCapBytes: 256 << 10, readCapBytes: 5 << 20, writeCapBytes: 5 << 20, binaryMimeAllow: [], executableExtensions: ['.exe', '.sh'], listsVersion: 3,
    ...more,
  };
}

export function overview(more: Partial<BuiltinSettings> = {}): Overview {
  const settings = builtinSettings(more);
  return {
    settings, defaults: builtinSettings(), enabled: settings.roots.length > 0,
    roots: settings.roots.map((path) => ({ path, source: 'settings', available: true })),
    sandbox: { enforced: true, mechanism: 'Landlock ABI 7', hidden: ['/home/me/.config/airlock'] },
  };
}
