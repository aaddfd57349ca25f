// Values the Node-side global setup provides to the workerd tests (`inject(...)`).
declare module "vitest" {
  export interface ProvidedContext {
    fakeEngineUrl: string;
  }
}

export {};
