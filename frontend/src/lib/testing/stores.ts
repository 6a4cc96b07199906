import { createStores, STORES, type Stores } from '../stores/context';

/** Fresh stores plus the render option that hands them to components. */
export function testStores(): { stores: Stores; context: Map<symbol, Stores> } {
  const stores = createStores();
  return { stores, context: new Map([[STORES, stores]]) };
}
