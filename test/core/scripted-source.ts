// Loads the scripted source plugin defined in refresh.test.ts (a plugin module the kernel can import).
export { default } from './refresh.test.ts';
