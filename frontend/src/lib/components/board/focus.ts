/** The focusable body of a task's card under root, found by the task id (any characters). */
export function cardElement(root: ParentNode | undefined, id: string): HTMLElement | null {
  const slot = [...(root?.querySelectorAll<HTMLElement>('[data-task-id]') ?? [])].find((e) => e.dataset.taskId === id && e.dataset.testid === 'task-card');
  return slot?.querySelector<HTMLElement>('.card') ?? null;
}
